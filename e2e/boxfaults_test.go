package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/boxbench/boxbench/internal/testenv"
)

// killAll is the fault of the server-killed tests: kill -9 of every process of the server.
func killAll(t *testing.T, pids []int) {
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill %d: %v", pid, err)
		}
	}
}

// TestFaultServerKilledDocker: kill -9 of the server in a Docker box (its pids read from the
// container's cgroup) fails that run; the next is ok; no container, volume, network or
// cgroup is left.
func TestFaultServerKilledDocker(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	injectFaultOn(t, dockerBox, "kill-docker", "stopped answering", killAll)
}

// TestFaultServerKilledLXC: kill -9 of the server in an LXC box (its pids read from the run's
// cgroup, /boxbench/<exp>/<run>) fails that run; the next is ok; no interface, LXC lock,
// cgroup, mount or work directory is left.
func TestFaultServerKilledLXC(t *testing.T) {
	needLXC(t, "redis")
	injectFaultOn(t, lxcBox, "kill-lxc", "stopped answering", killAll)
}

// stopAll is the fault of the server-stopped tests: SIGSTOP to every process of the server.
func stopAll(t *testing.T, pids []int) {
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Errorf("stop %d: %v", pid, err)
		}
	}
}

// TestFaultServerStoppedDocker: the server in a Docker box stops answering (SIGSTOP of its
// processes) mid-run: that run fails, the next is ok, teardown removes the stopped container.
func TestFaultServerStoppedDocker(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	injectFaultOn(t, dockerBox, "stop-docker", "stopped answering", stopAll)
}

// TestFaultServerStoppedLXC: the same in an LXC box.
func TestFaultServerStoppedLXC(t *testing.T) {
	needLXC(t, "redis")
	injectFaultOn(t, lxcBox, "stop-lxc", "stopped answering", stopAll)
}

// The platforms' boxes as the fault tests see them.
var (
	dockerBox = faultBox{platform: "docker", pids: dockerServerPids, leftovers: dockerLeftovers}
	lxcBox    = faultBox{platform: "lxc", leftovers: lxcLeftovers}
	nativeBox = faultBox{platform: "native"}
)

// needLXC requires root, the LXC tools and the database's root filesystem.
func needLXC(t *testing.T, dbms string) {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "lxc-start", "lxc-attach", "lxc-stop", "lxc-execute")
	if m, _ := filepath.Glob("/var/cache/boxbench/rootfs/" + dbms + "-*"); len(m) == 0 {
		testenv.Skip(t, "no "+dbms+" root filesystem (make images)")
	}
}

// needBox requires what box's platform needs to run dbms.
func needBox(t *testing.T, box faultBox, dbms string) {
	t.Helper()
	switch box.platform {
	case "docker":
		testenv.NeedRoot(t)
		testenv.NeedDocker(t)
	case "lxc":
		needLXC(t, dbms)
	default:
		testenv.NeedRoot(t)
	}
}

// dockerServerPids finds the server container of experiment exp by its labels, then its
// processes from the container's cgroup (the memory hierarchy on v1, the unified one on v2,
// as /proc/<pid>/cgroup of its init names it).
func dockerServerPids(t *testing.T, exp string) ([]int, []string) {
	out, err := exec.Command("docker", "ps", "-q", "--filter", "label=boxbench.experiment="+exp,
		"--filter", "label=boxbench.role=server").Output()
	if err != nil {
		return nil, nil
	}
	var pids []int
	var groups []string
	for _, id := range strings.Fields(string(out)) {
		b, err := exec.Command("docker", "inspect", "--format", "{{.State.Pid}}", id).Output()
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == 0 {
			continue
		}
		g := cgroupDir(pid)
		if g == "" || !strings.Contains(filepath.Base(g), id) {
			// The container's init exited meanwhile and its pid names another process (or
			// none): only the container's own group is ever read, and its pids killed.
			continue
		}
		groups = append(groups, g)
		pids = append(pids, readProcs([]string{filepath.Join(g, "cgroup.procs")})...)
	}
	return pids, groups
}

// cgroupDir is the directory of pid's cgroup: the memory controller's on v1, the unified on v2.
func cgroupDir(pid int) string {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.SplitN(sc.Text(), ":", 3)
		if len(p) != 3 {
			continue
		}
		if p[0] == "0" && p[1] == "" && !exists("/sys/fs/cgroup/memory") {
			return filepath.Join("/sys/fs/cgroup", p[2])
		}
		for _, c := range strings.Split(p[1], ",") {
			if c == "memory" {
				return filepath.Join("/sys/fs/cgroup/memory", p[2])
			}
		}
	}
	return ""
}

// dockerLeftovers: no container, volume or network labelled with exp.
func dockerLeftovers(t *testing.T, _, exp string) {
	for what, argv := range map[string][]string{
		"containers": {"ps", "-aq"},
		"volumes":    {"volume", "ls", "-q"},
		"networks":   {"network", "ls", "-q"},
	} {
		out, err := exec.Command("docker", append(argv, "--filter", "label=boxbench.experiment="+exp)...).Output()
		if err != nil {
			t.Errorf("docker %s: %v", strings.Join(argv, " "), err)
		} else if len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("%s left: %s", what, out)
		}
	}
}

// lxcLeftovers: no interface of the runs (the bridge "bbx" and veth "bbv" names are the
// platform's: 8 hex digits of sha256(<exp>/<run>)), no LXC lock directory of the experiment.
func lxcLeftovers(t *testing.T, work, exp string) {
	links, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Errorf("ip link: %v", err)
	}
	for _, run := range []string{"r0001", "r0002"} {
		h := sha256.Sum256([]byte(exp + "/" + run))
		s := hex.EncodeToString(h[:4])
		for _, name := range []string{"bbx" + s, "bbv" + s} {
			if bytes.Contains(links, []byte(" "+name+":")) || bytes.Contains(links, []byte(" "+name+"@")) {
				t.Errorf("interface left: %s (run %s)", name, run)
			}
		}
	}
	if lock := filepath.Join("/run/lxc/lock", work, exp); exists(lock) {
		t.Errorf("LXC lock directory left: %s", lock)
	}
}
