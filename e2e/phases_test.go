package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/storage"
)

// phaseSpec: two Redis runs on a platform, on storage=blockdev (an ext4 filesystem on a loop device
// over a file in the work root) of a ~100 MiB data set, so that each phase the tests hit
// lasts more than an instant and leaves something to clean up: the seed's load (a server in
// a cgroup), provision (the loop device mounted, the seed copied into it, the server reading
// it) and teardown (the server stopped, the filesystem unmounted, the loop device detached).
const phaseSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-fault-%s
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: 2s, warmup: 1s}
dataset: {records: 300000, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 512MiB}
storageOptions: {blockdev: {size: 512MiB}}
matrix:
  platform: [%s]
  storage: [blockdev]
  network: [%s]
repetitions: 2
order: sequential
`

// phaseMarker says, from what the host shows, that the first run of experiment exp is inside
// phase (not merely at its first log line): the test acts only then, never after a blind sleep.
func phaseMarker(work, exp, phase, log string) bool {
	if !strings.Contains(lastPhase(log), "msg="+phase+" ") {
		return false
	}
	switch phase {
	case "load":
		return len(serverPids(exp)) > 0 // the seed's server is up, the data set going in
	case "provision", "teardown":
		// The run's filesystem is mounted: provision is copying the seed or starting the
		// server; teardown has not unmounted it yet.
		return storage.MountedUnder(filepath.Join(work, exp, "r0001"))
	}
	return false
}

// TestFaultAtPhase ends boxbench during a phase of the first run: a signal while it
// provisions (SIGINT, SIGTERM, SIGHUP), and kill -9 while it loads the seed, provisions or
// tears down; on native boxes, and on a Docker box on bridge-direct (its own network) while
// it provisions. After a signal boxbench tears down and exits 130; after kill -9 nothing could,
// and `doctor --cleanup` removes what is left (the orphaned server, its cgroup, the mounted
// loop device, the work and socket directories). Either way no run is stored, nothing is left,
// and `--resume` then completes the experiment with both runs ok.
func TestFaultAtPhase(t *testing.T) {
	for _, c := range []struct {
		name    string
		sig     syscall.Signal
		phase   string
		box     faultBox
		network string
		running bool // wait also for the server's processes in the run's cgroup
	}{
		{"int-provision", syscall.SIGINT, "provision", nativeBox, "host", false},
		{"term-provision", syscall.SIGTERM, "provision", nativeBox, "host", false},
		{"hup-provision", syscall.SIGHUP, "provision", nativeBox, "host", false},
		{"kill-load", syscall.SIGKILL, "load", nativeBox, "host", false},
		{"kill-provision", syscall.SIGKILL, "provision", nativeBox, "host", false},
		{"kill-teardown", syscall.SIGKILL, "teardown", nativeBox, "host", false},
		// A Docker box on a network of its own: killed once its container exists (the
		// network and the container are left for doctor --cleanup).
		{"kill-provision-docker", syscall.SIGKILL, "provision", dockerBox, "bridge-direct", false},
		{"hup-provision-docker", syscall.SIGHUP, "provision", dockerBox, "bridge-direct", false},
		// An LXC box: interrupted once its filesystem is mounted (the seed going in), killed
		// once its server runs (reading the data set, not yet ready).
		{"int-provision-lxc", syscall.SIGINT, "provision", lxcBox, "host", false},
		{"kill-provision-lxc", syscall.SIGKILL, "provision", lxcBox, "host", true},
		// Killed while a Docker or an LXC box is torn down (its filesystem still mounted).
		{"kill-teardown-docker", syscall.SIGKILL, "teardown", dockerBox, "bridge-direct", false},
		{"kill-teardown-lxc", syscall.SIGKILL, "teardown", lxcBox, "host", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			needBox(t, c.box, "redis")
			testenv.NeedCommands(t, "redis-server", "losetup", "mkfs.ext4")
			e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
			e.specFile = filepath.Join(e.dir, "spec.yaml")
			name := "ph-" + c.name
			if err := os.WriteFile(e.specFile, []byte(fmt.Sprintf(phaseSpec, name, c.box.platform, c.network)), 0o644); err != nil {
				t.Fatal(err)
			}
			var exp string
			// Scoped to this experiment: other e2e experiments may run on the host meanwhile.
			leftovers := func() {
				assertNoFaultLeftovers(t, e.work, exp)
				if exp != "" && c.box.leftovers != nil {
					c.box.leftovers(t, e.work, exp)
				}
			}
			t.Cleanup(leftovers)
			out := filepath.Join(e.dir, "out")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd, log := e.start(ctx, t, out)
			deadline := time.Now().Add(3 * time.Minute)
			for {
				if exp == "" {
					exp = experimentOf(e.work, name)
				}
				if exp != "" && phaseMarker(e.work, exp, c.phase, log.String()) &&
					(c.box.platform != "docker" || dockerRunContainer(exp, "r0001")) &&
					(!c.running || len(serverPids(exp)) > 0) {
					break
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("never inside phase %s:\n%s", c.phase, log.String())
				}
				time.Sleep(10 * time.Millisecond) // teardown's window is short: look often
			}
			pids := serverPids(exp)
			if c.box.pids != nil {
				pids, _ = c.box.pids(t, exp)
			}
			if err := cmd.Process.Signal(c.sig); err != nil { // boxbench itself, not its group
				t.Fatal(err)
			}
			err := cmd.Wait()
			if c.sig == syscall.SIGKILL {
				if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("exit %v, want killed:\n%s", err, log.String())
				}
				// Nothing tore down: doctor --cleanup must find the experiment crashed (its
				// lock is free) and remove everything of it.
				b, err := e.boxbench(ctx, "doctor", "--cleanup").CombinedOutput()
				if err != nil {
					t.Fatalf("doctor --cleanup: %v\n%s", err, b)
				}
				if !bytes.Contains(b, []byte("removed (")) {
					t.Errorf("doctor --cleanup removed nothing of the killed experiment:\n%s", b)
				}
				t.Logf("doctor --cleanup after kill -9 during %s:\n%s", c.phase, b)
			} else {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
					t.Fatalf("exit %v, want 130:\n%s", err, log.String())
				}
				if !strings.Contains(log.String(), "received "+c.sig.String()) {
					t.Errorf("no word of the signal in the log:\n%s", log.String())
				}
			}
			for _, pid := range pids {
				if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(st, []byte(") Z ")) {
					t.Errorf("server %d outlived the experiment", pid)
				}
			}
			if n := storedRuns(t, out); n != 0 {
				t.Errorf("%d runs stored after %v during the first run's %s, want 0", n, c.sig, c.phase)
			}
			leftovers()

			b, err := e.boxbench(ctx, "run", e.specFile, "--out", out, "--resume").CombinedOutput()
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, b)
			}
			res, text := e.results(ctx, t, out)
			if len(res.Runs) != 2 {
				t.Fatalf("after resume %d runs stored, want 2:\n%s", len(res.Runs), text)
			}
			for _, r := range res.Runs {
				if r.Status != "ok" {
					t.Errorf("run %s %s after resume:\n%s", r.ID, r.Status, text)
				}
			}
		})
	}
}

// dockerRunContainer reports whether run's server container of experiment exp exists (then
// its own network does too).
func dockerRunContainer(exp, run string) bool {
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=boxbench.experiment="+exp,
		"--filter", "label=boxbench.run="+run, "--filter", "label=boxbench.role=server").Output()
	return err == nil && len(bytes.TrimSpace(out)) > 0
}

// TestFaultHungProbe: the server stops answering (SIGSTOP) while the first run provisions,
// after it has started and before it is ready, so that every readiness probe hangs (each
// connects and gets no answer). Provision ends at its deadline (timeouts.provision) with the
// run failed and its reason; the box is removed with its stopped server; the second run is ok
// and nothing is left.
func TestFaultHungProbe(t *testing.T) {
	needBox(t, nativeBox, "redis")
	testenv.NeedCommands(t, "redis-server", "losetup", "mkfs.ext4")
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	name := "ph-hung-probe"
	text := fmt.Sprintf(phaseSpec, name, "native", "host") + "timeouts: {provision: 20s}\n"
	if err := os.WriteFile(e.specFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var exp string
	t.Cleanup(func() { assertNoFaultLeftovers(t, e.work, exp) })
	out := filepath.Join(e.dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, log := e.start(ctx, t, out)
	var pids []int
	waitFor(t, cmd, log, 3*time.Minute, "the first run's server never started", func() bool {
		if exp == "" {
			exp = experimentOf(e.work, name)
		}
		if exp == "" || !phaseMarker(e.work, exp, "provision", log.String()) {
			return false
		}
		pids = serverPids(exp)
		return len(pids) > 0
	})
	stopAll(t, pids)
	if !strings.Contains(lastPhase(log.String()), "msg=provision ") {
		t.Fatalf("the server was ready before it could be stopped: no hung probe\n%s", log.String())
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want 1 (a run failed):\n%s", err, log.String())
	}
	for _, pid := range pids {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("server %d outlived its run", pid)
		}
	}
	res, text2 := e.results(ctx, t, out)
	if len(res.Runs) != 2 || res.Runs[0].Status != "failed" || res.Runs[1].Status != "ok" {
		t.Fatalf("want run 1 failed and run 2 ok:\n%s\n%s", text2, log.String())
	}
	b, _ := e.boxbench(ctx, "results", out, "--format", "json").Output()
	var got faultRuns
	_ = json.Unmarshal(b, &got)
	if r := got.Runs[0].Reason; !strings.Contains(r, "provision") || !strings.Contains(r, "not ready") {
		t.Errorf("run 1's reason does not say that provision timed out waiting for the server: %q", r)
	}
	t.Logf("run 1: %s", got.Runs[0].Reason)
}
