package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// phaseSpec: two Redis runs on a platform, on storage=blockdev (an ext4 filesystem on a loop
// device over a file in the work root) of a ~100 MiB data set, so that each phase the tests
// hit lasts more than an instant and leaves something to clean up: the seed's load (a server
// in a cgroup), provision (the loop device mounted, the seed copied into it, the server
// reading it) and teardown (the server stopped, the filesystem unmounted, the loop device
// detached).
func phaseSpec(name, platform, network string) spec {
	return spec{Name: "fault-" + name, Records: 300000, Order: "sequential",
		Matrix: "  platform: [" + platform + "]\n  storage: [blockdev]\n  network: [" + network + "]",
		Extra:  "storageOptions: {blockdev: {size: 512MiB}}\n"}
}

// signalSpec: two Redis runs on a platform (each box's default storage and network); records
// sets how long the seed's load takes, the workload how long each run measures.
func signalSpec(name, platform string, records int) spec {
	return spec{Name: "fault-" + name, Records: records, Order: "sequential",
		Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: 8s, warmup: 1s}",
		Matrix:   "  platform: [" + platform + "]"}
}

// phaseMarker says, from what the host shows, that the first run of r's experiment is inside
// phase (not merely at its first log line): the test acts only then, never after a blind sleep.
func phaseMarker(r *running, phase string) bool {
	if !r.inPhase(phase) {
		return false
	}
	switch phase {
	case "load":
		return len(serverPids(r.exp)) > 0 // the seed's server is up, the data set going in
	case "provision", "teardown":
		// The run's filesystem is mounted: provision is copying the seed or starting the
		// server; teardown has not unmounted it yet.
		return storage.MountedUnder(filepath.Join(r.e.work, r.exp, "r0001"))
	}
	return true
}

// phaseCase ends boxbench with sig during the nth occurrence of phase in its log.
type phaseCase struct {
	name  string
	sig   syscall.Signal
	phase string
	nth   int
	spec  spec
	box   box
	// running: wait also for the server's processes in the run's cgroup.
	running bool
	// settle: act this long after the phase is reached, still inside it (a run's measurement).
	settle time.Duration
	// stored is how many runs are stored when the signal arrives.
	stored int
}

// atPhase runs c: boxbench ended during the phase tears down and exits 130 after a signal, or
// is killed and cleaned up after by `doctor --cleanup`; either way the server is gone, only the
// runs before the interrupted one are stored, nothing is left, and `--resume` then completes
// the experiment with both runs ok.
func atPhase(t *testing.T, c phaseCase) {
	parallel(t)
	// boxbench's start and `doctor --cleanup` release a swarm boxbench made (and wait on its
	// lock): not while a swarm test runs, whose swarm it would leave between two services.
	testenv.HoldShared(t, "swarm")
	c.box.need(t, "redis")
	testenv.NeedCommands(t, "redis-server", "losetup", "mkfs.ext4")
	e := newEnv(t, c.spec)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := e.start(ctx, t)
	run := fmt.Sprintf("r%04d", c.nth) // runs are sequential: the nth phase is the nth run's
	var pids []int
	r.waitFor(t, 3*time.Minute, "never inside phase "+c.phase, func() bool {
		if r.experiment() == "" || strings.Count(r.log.String(), "msg="+c.phase+" ") < c.nth ||
			!phaseMarker(r, c.phase) ||
			(c.box == "docker" && c.phase != "load" && e.dockerContainers(r.exp, run, true) == 0) ||
			(c.running && len(serverPids(r.exp)) == 0) {
			return false
		}
		// The server's processes are gathered here, and the phase checked again after: the
		// signal must follow at once, not after seconds of looking on a loaded host.
		pids, _ = c.box.pids(e, r.exp)
		return phaseMarker(r, c.phase)
	})
	if c.settle > 0 {
		start := time.Now()
		r.seeLive(t) // within the settle time, for the same reason
		time.Sleep(c.settle - time.Since(start))
		if !r.inPhase(c.phase) {
			t.Fatalf("the phase %s ended within %s: the signal would hit another\n%s", c.phase, c.settle, r.log.String())
		}
	}
	r.crash(ctx, t, c.sig)
	assertGone(t, pids, "server")
	if n := len(runIDs(t, r.out)); n != c.stored {
		t.Errorf("%d runs stored after %v during %s #%d, want %d", n, c.sig, c.phase, c.nth, c.stored)
	}
	e.assertClean(t)
	e.resume(ctx, t, r.out, 2)
}

// TestFaultAtPhase ends boxbench during a phase of the first run on a loop device: a signal
// while it provisions (SIGINT, SIGTERM, SIGHUP), and kill -9 while it loads the seed,
// provisions or tears down; on native boxes, on a Docker box on bridge-direct (its own
// network; acted on once its container exists) and on an LXC box.
func TestFaultAtPhase(t *testing.T) {
	t.Parallel()
	for _, c := range []phaseCase{
		{name: "int-provision", sig: syscall.SIGINT, phase: "provision", box: "native"},
		{name: "term-provision", sig: syscall.SIGTERM, phase: "provision", box: "native"},
		{name: "hup-provision", sig: syscall.SIGHUP, phase: "provision", box: "native"},
		{name: "kill-load", sig: syscall.SIGKILL, phase: "load", box: "native"},
		{name: "kill-provision", sig: syscall.SIGKILL, phase: "provision", box: "native"},
		{name: "kill-teardown", sig: syscall.SIGKILL, phase: "teardown", box: "native"},
		// A Docker box on a network of its own: the network and the container are left for
		// doctor --cleanup.
		{name: "kill-provision-docker", sig: syscall.SIGKILL, phase: "provision", box: "docker"},
		{name: "hup-provision-docker", sig: syscall.SIGHUP, phase: "provision", box: "docker"},
		// An LXC box: interrupted once its filesystem is mounted (the seed going in), killed
		// once its server runs (reading the data set, not yet ready).
		{name: "int-provision-lxc", sig: syscall.SIGINT, phase: "provision", box: "lxc"},
		{name: "kill-provision-lxc", sig: syscall.SIGKILL, phase: "provision", box: "lxc", running: true},
		// Killed while a Docker or an LXC box is torn down (its filesystem still mounted).
		{name: "kill-teardown-docker", sig: syscall.SIGKILL, phase: "teardown", box: "docker"},
		{name: "kill-teardown-lxc", sig: syscall.SIGKILL, phase: "teardown", box: "lxc"},
	} {
		network := "host"
		if c.box == "docker" {
			network = "bridge-direct"
		}
		c.nth, c.spec = 1, phaseSpec("ph-"+c.name, string(c.box), network)
		t.Run(c.name, func(t *testing.T) { atPhase(t, c) })
	}
}

// TestSignalAtPhase sends SIGINT, SIGHUP or SIGQUIT (Ctrl-C, a dropped ssh session, Ctrl-\)
// while the first run loads its seed or while a run measures (the first: nothing stored; the
// second: the first is kept); on native boxes, and during the measurement on Docker (SIGTERM)
// and LXC boxes.
func TestSignalAtPhase(t *testing.T) {
	t.Parallel()
	for _, c := range []phaseCase{
		{name: "hup-load", sig: syscall.SIGHUP, phase: "load", nth: 1, box: "native"},
		{name: "quit-load", sig: syscall.SIGQUIT, phase: "load", nth: 1, box: "native"},
		{name: "int-measure", sig: syscall.SIGINT, phase: "warmup+measure", nth: 1, box: "native"},
		{name: "hup-measure", sig: syscall.SIGHUP, phase: "warmup+measure", nth: 2, stored: 1, box: "native"},
		{name: "quit-measure", sig: syscall.SIGQUIT, phase: "warmup+measure", nth: 2, stored: 1, box: "native"},
		{name: "term-measure-docker", sig: syscall.SIGTERM, phase: "warmup+measure", nth: 2, stored: 1, box: "docker"},
		{name: "hup-measure-lxc", sig: syscall.SIGHUP, phase: "warmup+measure", nth: 2, stored: 1, box: "lxc"},
	} {
		records := 1000
		if c.phase == "load" {
			records = 300000
		} else {
			c.settle = time.Second // inside the measurement, not at its first line
		}
		c.spec = signalSpec("sig-"+c.name, string(c.box), records)
		t.Run(c.name, func(t *testing.T) { atPhase(t, c) })
	}
}
