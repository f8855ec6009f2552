package docker

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/boxbench/boxbench/cgroup"
)

// The fixture is /proc/<pid>/cgroup of a container started by Docker 20.10 (cgroupfs driver) on
// a cgroup v1 hybrid host; its "0::" line is the (empty) unified hierarchy's view, which is the
// line a v2 host has alone.
func TestParseProcCgroup(t *testing.T) {
	const want = "/docker/9b06bea4563b2ef00c00d247b1d47e0133ae519930489a401d708b2f001a1016"
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		f, err := os.Open("testdata/proc-cgroup-v1-hybrid")
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseProcCgroup(f, v)
		f.Close()
		if err != nil || got != want {
			t.Errorf("v%d: %q %v, want %q", v, got, err, want)
		}
	}
	if _, err := parseProcCgroup(strings.NewReader("1:cpu:/x\n"), cgroup.V1); err == nil {
		t.Error("no memory line: no error")
	}
}

// TestKillStray starts a process whose command line holds a container id and checks that only
// it is killed.
func TestKillStray(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	// tail keeps following /dev/null after complaining about the missing second file.
	mine := exec.Command("tail", "-f", "/dev/null", "/nonexistent/"+id)
	other := exec.Command("tail", "-f", "/dev/null", "/nonexistent/"+strings.Replace(id, "0", "f", 1))
	for _, c := range []*exec.Cmd{mine, other} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = c.Wait() }()
	}
	defer func() { _ = other.Process.Kill() }()
	pids := killStray(id)
	if len(pids) != 1 || pids[0] != mine.Process.Pid {
		t.Errorf("killed %v, want [%d]", pids, mine.Process.Pid)
	}
	if syscall.Kill(other.Process.Pid, 0) != nil {
		t.Error("an unrelated process was killed")
	}
}
