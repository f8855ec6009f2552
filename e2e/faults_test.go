package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/testenv"
)

// faultSpec: two runs of one Redis cell on a platform (each box's default storage and
// network), long enough to inject a fault into the first.
const faultSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-fault-%s
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: 6s, warmup: 1s}
dataset: {records: 1000, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 256MiB}
matrix:
  platform: [%s]
repetitions: 2
order: sequential
`

// faultRuns is what the tests read of `results --format json`.
type faultRuns struct {
	Runs []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"runs"`
}

// serverPids lists the processes in the cgroups of experiment exp's runs (the measured
// servers: the experiment has no neighbours), found from the cgroup tree as the issue asks.
// LXC's monitor groups (<run>.monitor) hold lxc-start, not the server, and are left out.
func serverPids(exp string) []int {
	var files []string
	for _, pat := range []string{"/sys/fs/cgroup/memory/boxbench/" + exp + "/*", "/sys/fs/cgroup/boxbench/" + exp + "/*"} {
		m, _ := filepath.Glob(pat)
		for _, dir := range m {
			if strings.HasSuffix(dir, ".monitor") {
				continue
			}
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "cgroup.procs" {
					files = append(files, p)
				}
				return nil
			})
		}
	}
	return readProcs(files)
}

// readProcs reads the pids listed in cgroup.procs files.
func readProcs(files []string) []int {
	var pids []int
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// runPassword reads the first run's password from its redis.conf (the test is root), so that
// the test can check it is stored nowhere. It returns "" when the configuration is not on the
// host (a Docker box on its overlay layer).
func runPassword(t *testing.T, work, exp string) string {
	t.Helper()
	var confs []string
	_ = filepath.WalkDir(filepath.Join(work, exp), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "redis.conf" {
			confs = append(confs, p)
		}
		return nil
	})
	for _, c := range confs {
		f, err := os.Open(c)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if pw, ok := strings.CutPrefix(sc.Text(), "requirepass "); ok {
				f.Close()
				return pw
			}
		}
		f.Close()
	}
	return ""
}

// injectFault runs the fault experiment on a native box.
func injectFault(t *testing.T, name, want string, fault func(t *testing.T, pids []int)) {
	injectFaultOn(t, faultBox{platform: "native"}, name, want, fault)
}

// faultBox is what the fault tests need to know of a platform: how to find the measured
// server's processes and what it may leave behind beyond the host's boxbench places.
type faultBox struct {
	platform string
	// pids lists the server's processes of experiment exp from its cgroup, and the cgroup
	// directories they were read from (nil: the runs' cgroups under /boxbench, serverPids).
	pids func(t *testing.T, exp string) ([]int, []string)
	// leftovers reports what experiment exp left of the platform's own (nil: nothing more).
	leftovers func(t *testing.T, work, exp string)
}

// injectFaultOn runs the fault experiment on box's platform, calls fault once the first run
// measures, and checks the outcome: exit status 1, the first run failed with a reason
// containing want, the second ok, the run's password nowhere in the results or the log, and
// no leftovers (the server's cgroups included).
func injectFaultOn(t *testing.T, box faultBox, name, want string, fault func(t *testing.T, pids []int)) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server")
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	if err := os.WriteFile(e.specFile, []byte(fmt.Sprintf(faultSpec, name, box.platform)), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		exp    string
		groups []string
	)
	t.Cleanup(func() {
		assertNoFaultLeftovers(t, e.work, exp)
		if exp != "" && box.leftovers != nil {
			box.leftovers(t, e.work, exp)
		}
		for _, g := range groups {
			if exists(g) {
				t.Errorf("the server's cgroup is left: %s", g)
			}
		}
	})
	pidsOf := func() []int {
		if exp == "" {
			exp = experimentOf(e.work, name)
		}
		if exp == "" {
			return nil
		}
		if box.pids == nil {
			return serverPids(exp)
		}
		p, g := box.pids(t, exp)
		groups = append(groups, g...)
		return p
	}
	out := filepath.Join(e.dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd, log := e.start(ctx, t, out)
	waitFor(t, cmd, log, 2*time.Minute, "the first run never measured", func() bool {
		return strings.Contains(log.String(), "warmup+measure") && len(pidsOf()) > 0
	})
	pw := runPassword(t, e.work, exp)
	if pw == "" && box.platform == "native" {
		t.Fatalf("no redis.conf with requirepass under %s", e.work)
	}
	time.Sleep(2 * time.Second) // into the measured window
	pids := pidsOf()
	fault(t, pids)
	err := cmd.Wait()
	for _, pid := range pids {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("server %d outlived its run", pid)
		}
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want 1 (a run failed):\n%s", err, log.String())
	}
	b, rerr := e.boxbench(ctx, "results", out, "--format", "json").Output()
	if rerr != nil {
		t.Fatalf("results: %v", rerr)
	}
	var got faultRuns
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 2 || got.Runs[0].Status != "failed" || !strings.Contains(got.Runs[0].Reason, want) || got.Runs[1].Status != "ok" {
		t.Errorf("want run 1 failed (%q) and run 2 ok, got %s\n%s", want, b, log.String())
	}
	if pw == "" {
		t.Logf("the run's configuration is not on the host (%s): the password is not looked for", box.platform)
		return
	}
	table, _ := e.boxbench(ctx, "results", out).CombinedOutput()
	db, _ := os.ReadFile(filepath.Join(out, "results.db"))
	for what, text := range map[string][]byte{"results json": b, "results table": table, "results.db": db, "the log": []byte(log.String())} {
		if bytes.Contains(text, []byte(pw)) {
			t.Errorf("the run's password is in %s", what)
		}
	}
}

// experimentOf is the id of the running fault experiment name, from its lock file under the
// test's own work root (not the host's cgroup tree: another checkout's tests may run an
// experiment of the same name at the same time).
func experimentOf(work, name string) string {
	if m, _ := filepath.Glob(filepath.Join(work, "locks", "e2e-fault-"+name+"-*.lock")); len(m) > 0 {
		return strings.TrimSuffix(filepath.Base(m[0]), ".lock")
	}
	return ""
}

// assertNoFaultLeftovers: of experiment exp, nothing is left: no cgroup (in any hierarchy),
// no process, no mount or loop device under the work root, no labelled container, no socket
// directory of its runs, and nothing under the work root but the locks and the seed cache.
// (Scoped to exp: other packages' tests may run at the same time.)
func assertNoFaultLeftovers(t *testing.T, work, exp string) {
	t.Helper()
	if exp == "" {
		return // the run never started: the test has failed already
	}
	if m, _ := filepath.Glob("/sys/fs/cgroup/*/boxbench/" + exp); len(m) > 0 {
		t.Errorf("cgroups left: %v", m)
	}
	if _, err := os.Stat("/sys/fs/cgroup/boxbench/" + exp); err == nil {
		t.Errorf("cgroup left: /sys/fs/cgroup/boxbench/%s", exp)
	}
	mounts, _ := os.ReadFile("/proc/self/mounts")
	if bytes.Contains(mounts, []byte(" "+work+"/")) { // under it: the work root may be a mount of the test's
		t.Errorf("mount left under %s", work)
	}
	if out, err := exec.Command("losetup", "--list", "--noheadings", "--output", "BACK-FILE").Output(); err == nil && bytes.Contains(out, []byte(work)) {
		t.Errorf("loop device left: %s", out)
	}
	if out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=boxbench.experiment="+exp).Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("containers left: %s", out)
	}
	for _, run := range []string{"r0001", "r0002"} {
		h := sha256.Sum256([]byte(filepath.Join(work, exp, run)))
		if dir := filepath.Join(os.TempDir(), "boxbench-"+hex.EncodeToString(h[:6])); exists(dir) {
			t.Errorf("socket directory left: %s", dir)
		}
	}
	ents, _ := os.ReadDir(work)
	for _, e := range ents {
		if n := e.Name(); n != "locks" && n != "seeds" {
			t.Errorf("left under the work root: %s", n)
		}
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestFaultServerKilled: kill -9 of the database mid-run fails that run; the next is ok.
func TestFaultServerKilled(t *testing.T) {
	injectFault(t, "kill", "stopped answering", func(t *testing.T, pids []int) {
		for _, pid := range pids {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Errorf("kill %d: %v", pid, err)
			}
		}
	})
}

// TestFaultServerStopped: a database that stops answering (SIGSTOP) mid-run fails that run:
// the load generator's operations hang, it ends at its deadline, the liveness check times
// out, and teardown still removes the stopped server.
func TestFaultServerStopped(t *testing.T) {
	injectFault(t, "stop", "stopped answering", func(t *testing.T, pids []int) {
		for _, pid := range pids {
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Errorf("stop %d: %v", pid, err)
			}
		}
	})
}

// hungSpec: two PostgreSQL runs of sysbench on a platform (the load generator is a process of
// its own on the host, so it can hang: SIGSTOP), which also authenticates with the run's
// password.
const hungSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-fault-%s
dbms: postgresql
workload: {type: sysbench, test: oltp_read_only, tables: 1, tableSize: 1000, threads: 1, duration: 3s, warmup: 0s}
limits: {cpus: 1, memory: 256MiB}
matrix:
  platform: [%s]
repetitions: 2
order: sequential
`

// childNamed lists the processes named comm whose parent is ppid.
func childNamed(ppid int, comm string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open || s[open+1:close] != comm {
			continue
		}
		if f := strings.Fields(s[close+1:]); len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestFaultHungLoadGenerator: a load generator that hangs (SIGSTOP of sysbench) is killed at
// the workload's deadline and its run fails; the next run is ok. On a native, a Docker and an
// LXC box (the server in the box, sysbench on the host).
func TestFaultHungLoadGenerator(t *testing.T) {
	for _, box := range []faultBox{nativeBox, dockerBox, lxcBox} {
		t.Run(box.platform, func(t *testing.T) { hungOn(t, box) })
	}
}

func hungOn(t *testing.T, box faultBox) {
	needBox(t, box, "postgresql")
	testenv.NeedCommands(t, "sysbench", "/usr/lib/postgresql/15/bin/postgres")
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	name := "hung-" + box.platform
	if err := os.WriteFile(e.specFile, []byte(fmt.Sprintf(hungSpec, name, box.platform)), 0o644); err != nil {
		t.Fatal(err)
	}
	var exp string
	t.Cleanup(func() {
		assertNoFaultLeftovers(t, e.work, exp)
		if exp != "" && box.leftovers != nil {
			box.leftovers(t, e.work, exp)
		}
	})
	out := filepath.Join(e.dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, log := e.start(ctx, t, out)
	var sb []int
	waitFor(t, cmd, log, 3*time.Minute, "sysbench never ran", func() bool {
		sb = childNamed(cmd.Process.Pid, "sysbench")
		return strings.Contains(log.String(), "warmup+measure") && len(sb) > 0
	})
	exp = experimentOf(e.work, name)
	for _, pid := range sb {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want 1 (a run failed):\n%s", err, log.String())
	}
	b, err := e.boxbench(ctx, "results", out, "--format", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got faultRuns
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 2 || got.Runs[0].Status != "failed" || !strings.Contains(got.Runs[0].Reason, "did not finish") || got.Runs[1].Status != "ok" {
		t.Errorf("want run 1 failed (sysbench did not finish) and run 2 ok, got %s\n%s", b, log.String())
	}
	for _, pid := range sb {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("sysbench %d outlived its run", pid)
		}
	}
}
