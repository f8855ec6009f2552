package swarm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testenv"
)

func (e *env) request(exp, run, st, nw string) platform.Request {
	var d dbms.DBMS = redis.Redis{}
	return platform.Request{Experiment: exp, Run: run, WorkDir: filepath.Join(e.root, exp, run), DBMS: d,
		Choice: platform.Choice{Storage: st, Network: nw}, Resources: limits, StorageOpts: sizes}
}

func (e *env) assertClean(t *testing.T, exp string) {
	t.Helper()
	if left := e.leftovers(context.Background(), exp); len(left) > 0 {
		t.Errorf("left of %s: %v", exp, left)
	}
}

// TestVIP: where the kernel has no IPVS, Check says so without starting anything, and a real
// trial fails with the failed connect to the virtual IP (the engine accepts the service) and
// leaves nothing; where it has IPVS, the trial works.
func TestVIP(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var d dbms.DBMS = redis.Redis{}
	c := platform.Choice{DBMS: d, Storage: StorageVolume, Network: NetworkVIP}
	noIPVS := kernelHas("CONFIG_IP_VS", "") != nil
	cerr := e.p.Check(ctx, c)
	if noIPVS != (cerr != nil) {
		t.Errorf("kernel without IPVS: %v; Check: %v", noIPVS, cerr)
	}
	if cerr != nil && !strings.Contains(cerr.Error(), "CONFIG_IP_VS") {
		t.Errorf("Check does not name the kernel option: %v", cerr)
	}
	perr := e.p.Probe(ctx, c)
	t.Logf("check: %v\nprobe: %v", cerr, perr)
	if noIPVS {
		if perr == nil {
			t.Fatal("a VIP answered on a kernel without IPVS")
		}
		if !strings.Contains(perr.Error(), "virtual IP") || !strings.Contains(perr.Error(), "while the task's own address") {
			t.Errorf("probe error does not say that the VIP failed while the task answered: %v", perr)
		}
	} else if perr != nil {
		t.Errorf("VIP trial on a kernel with IPVS: %v", perr)
	}
	e.assertClean(t, ProbeExperiment)
}

// TestForeignSwarm: a swarm boxbench did not create (made here through the API, as a user
// would, without boxbench's marker) is used and never left: not by a teardown, not by Cleanup.
func TestForeignSwarm(t *testing.T) {
	e := newEnv(t)
	if e.wasActive {
		t.Skip("a swarm is already active: the test makes its own and cannot here (nothing is wrong)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := e.engine.SwarmInit(ctx, swarm.InitRequest{ListenAddr: "127.0.0.1:0", AdvertiseAddr: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.engine.SwarmLeave(context.Background(), true); err != nil {
			t.Errorf("leave the test's swarm: %v", err)
		}
		_ = e.p.removeGwBridge(context.Background())
	}()
	exp := fmt.Sprintf("test-foreign-%d", os.Getpid())
	r := e.request(exp, "r1", StorageBind, NetworkOverlay)
	b, err := e.p.Provision(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Facts()["swarm_created_by_boxbench"]; got != "false" {
		t.Errorf("fact swarm_created_by_boxbench = %q on a swarm the test made", got)
	}
	if err := b.Teardown(ctx); err != nil {
		t.Error(err)
	}
	crashed := e.request(exp+"-crashed", "r1", StorageVolume, NetworkHost)
	if _, err := e.p.Provision(ctx, crashed); err != nil {
		t.Fatal(err)
	}
	if _, err := e.p.Cleanup(ctx, e.root, func(x string) bool { return x == crashed.Experiment }); err != nil {
		t.Error(err)
	}
	info, err := e.engine.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Swarm.LocalNodeState != swarm.LocalNodeStateActive {
		t.Error("boxbench left a swarm it did not create")
	}
	if _, err := readMarker(info.ID, clusterID(info.Swarm)); err == nil {
		t.Error("a marker names the test's swarm as boxbench's")
	}
	e.assertClean(t, exp)
	e.assertClean(t, crashed.Experiment)
}

// TestInterrupted cancels Provision at several points (as Ctrl-C does): each attempt fails with
// the cancellation or succeeds, and nothing is left, the swarm included.
func TestInterrupted(t *testing.T) {
	e := newEnv(t)
	exp := fmt.Sprintf("test-interrupted-%d", os.Getpid())
	for i, after := range []time.Duration{100 * time.Millisecond, 600 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second} {
		for _, c := range []platform.Choice{{Storage: StorageVolume, Network: NetworkOverlay}, {Storage: StorageBind, Network: NetworkHost}} {
			r := e.request(exp, fmt.Sprintf("cancel-%d-%s", i, c.Network), c.Storage, c.Network)
			ctx, cancel := context.WithTimeout(context.Background(), after)
			b, err := e.p.Provision(ctx, r)
			cancel()
			if err == nil {
				t.Logf("%s: ready within %s", r.Run, after)
				if err := b.Teardown(context.Background()); err != nil {
					t.Error(err)
				}
				continue
			}
			if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "context deadline exceeded") {
				t.Errorf("%s: %v", r.Run, err)
			}
			if _, serr := os.Stat(r.WorkDir); !os.IsNotExist(serr) {
				t.Errorf("%s: work dir left after %v", r.Run, err)
			}
		}
	}
	e.assertClean(t, exp)
}

// TestUnschedulable: a reservation no node can give leaves the task pending; Provision fails
// with the scheduler's own reason, not a timeout, and leaves nothing.
func TestUnschedulable(t *testing.T) {
	e := newEnv(t)
	exp := fmt.Sprintf("test-unschedulable-%d", os.Getpid())
	r := e.request(exp, "big", StorageBind, NetworkHost)
	r.Resources = resource.Limits{CPUs: 512}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := e.p.Provision(ctx, r)
	if err == nil {
		_ = b.Teardown(ctx)
		t.Fatal("a service reserving 512 CPUs ran")
	}
	t.Logf("provision failed as expected: %v", err)
	if !strings.Contains(err.Error(), "insufficient resources") || ctx.Err() != nil {
		t.Errorf("error without the scheduler's reason: %v", err)
	}
	e.assertClean(t, exp)
}

// TestServerKilled: a task container killed behind the orchestrator's back is not restarted
// (restart policy none), Stop returns, and the teardown still removes everything.
func TestServerKilled(t *testing.T) {
	e := newEnv(t)
	exp := fmt.Sprintf("test-killed-%d", os.Getpid())
	r := e.request(exp, "k", StorageVolume, NetworkOverlay)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b, err := e.p.Provision(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	id := b.Facts()["task_container"]
	if err := e.engine.ContainerKill(ctx, id, "KILL"); err != nil {
		t.Fatal(err)
	}
	if err := b.Stop(ctx); err != nil {
		t.Errorf("stop after the server died: %v", err)
	}
	time.Sleep(3 * time.Second) // time for a restart, if the orchestrator made one
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	defer rcancel()
	if err := r.DBMS.Ready(rctx, b.Endpoint(), r.DBMS.Client()); err == nil {
		t.Error("the killed server answers again: the orchestrator restarted it")
	}
	if err := b.Teardown(ctx); err != nil {
		t.Error(err)
	}
	e.assertClean(t, exp)
}

// TestCleanupAll: `doctor --cleanup` runs every platform's cleanup, docker's before swarm's. A
// crashed experiment's service, task container, overlay network and volume are all removed
// without an error from either: docker's cleanup leaves swarm's objects to swarm's (a network
// in use by a live service cannot be removed, a removed task would be replaced), and swarm's
// removes them after the service.
func TestCleanupAll(t *testing.T) {
	e := newEnv(t)
	exp := fmt.Sprintf("test-cleanupall-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r := e.request(exp, "c", StorageVolume, NetworkOverlay)
	if _, err := e.p.Provision(ctx, r); err != nil { // abandoned, as after kill -9
		t.Fatal(err)
	}
	if len(e.leftovers(ctx, exp)) == 0 {
		t.Fatal("leftovers see nothing of a running box: the check cannot fail")
	}
	ps := map[string]platform.Platform{"docker": e.p.d, Name: e.p}
	done, err := platform.CleanupAll(ctx, ps, e.root, func(x string) bool { return x == exp })
	for _, d := range done {
		t.Logf("removed (%s): %s", d.Platform, d.What)
	}
	if err != nil {
		t.Errorf("cleanup: %v", err)
	}
	e.assertClean(t, exp)
}

// TestSwarmGone: the swarm is left under a running box (by hand, or by another process).
// Teardown must still remove everything the box made — the volume last — instead of spending
// its time waiting for the tasks of a service that went with the swarm.
func TestSwarmGone(t *testing.T) {
	e := newEnv(t)
	if e.wasActive {
		testenv.Skip(t, "a swarm is active on this engine: the test leaves the swarm, and never one it did not make")
	}
	exp := fmt.Sprintf("test-gone-%d", os.Getpid())
	r := e.request(exp, "g", StorageVolume, NetworkOverlay)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, err := e.engine.NetworkInspect(ctx, gwBridge, network.InspectOptions{})
	bridgeBefore := !cerrdefs.IsNotFound(err)
	b, err := e.p.Provision(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.engine.SwarmLeave(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := b.Teardown(ctx); err != nil {
		t.Errorf("teardown after the swarm was left: %v", err)
	}
	e.assertClean(t, exp)
	if info, err := e.engine.Info(ctx); err != nil {
		t.Error(err)
	} else if _, err := readMarker(info.ID, ""); err == nil {
		t.Error("the marker still names the swarm that was left")
	}
	if _, err := e.engine.NetworkInspect(ctx, gwBridge, network.InspectOptions{}); !bridgeBefore && !cerrdefs.IsNotFound(err) {
		t.Errorf("%s, which boxbench's swarm init made, is still there (%v)", gwBridge, err)
	}
}
