package swarm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/flock"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
	"github.com/boxbench/boxbench/platform/platformtest"
)

var (
	limits = resource.Limits{CPUs: 1, Cpuset: "1", MemoryBytes: 512 << 20, CPUWeight: 200}
	sizes  = platform.StorageOptions{TmpfsSize: 1 << 30}
)

// env is an engine, the platform, a work root, and the swarm state before the test: at the end
// nothing of the test's experiments may be left, and a swarm the test found inactive must be
// inactive again (boxbench left the one it made).
type env struct {
	engine    client.APIClient
	p         *Platform
	root      string
	wasActive bool
}

func newEnv(t *testing.T) *env {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	engine, err := image.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	// The swarm is the engine's: tests of other packages that make or leave one (e2e's
	// TestSwarm) must not run meanwhile, or the state checks below would see each other's.
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := flock.Lock(context.Background(), filepath.Join(StateDir, "swarm-test.lock"), func() {
		t.Log("waiting for another test process's swarm tests")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := &env{engine: engine, p: New(docker.New(engine, log), log), root: testenv.WorkRoot(t)}
	// The suite keeps Docker clusters on bridge networks apart from swarm tests with a lock
	// (testenv.HoldShared), so these tests accept the leave's loss of bridge names
	// (bridges.go); TestBridgeGuard checks the refusal itself.
	e.p.ConfigureSection(Section{AcceptBridgeDNSLoss: true})
	var d dbms.DBMS = redis.Redis{}
	if _, err := e.p.d.Image(context.Background(), d); errors.Is(err, image.ErrNotBuilt) {
		testenv.Skip(t, err.Error()+" (or run go test ./images/image/, which builds them)")
	} else if err != nil {
		t.Fatal(err)
	}
	info, err := engine.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.wasActive = info.Swarm.LocalNodeState == swarm.LocalNodeStateActive
	t.Cleanup(func() {
		info, err := engine.Info(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
		if now := info.Swarm.LocalNodeState == swarm.LocalNodeStateActive; now != e.wasActive {
			t.Errorf("swarm active before the test: %v, after: %v (boxbench must leave only the swarm it made, and leave it)", e.wasActive, now)
		}
	})
	return e
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// leftovers lists what of experiment exp the engine and the host still hold.
func (e *env) leftovers(ctx context.Context, exp string) []string {
	left := platformtest.HostLeftovers(e.root, exp)
	f := filters.NewArgs(filters.Arg("label", docker.LabelExperiment+"="+exp))
	var errs []error
	if info, err := e.engine.Info(ctx); err == nil && info.Swarm.LocalNodeState == swarm.LocalNodeStateActive {
		ss, err := e.engine.ServiceList(ctx, swarm.ServiceListOptions{Filters: f})
		errs = append(errs, err)
		for _, s := range ss {
			left = append(left, "service "+s.Spec.Name)
		}
	}
	cs, err := e.engine.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	errs = append(errs, err)
	for _, c := range cs {
		left = append(left, "container "+c.Names[0])
	}
	ns, err := e.engine.NetworkList(ctx, network.ListOptions{Filters: f})
	errs = append(errs, err)
	for _, n := range ns {
		left = append(left, "network "+n.Name)
	}
	vs, err := e.engine.VolumeList(ctx, volume.ListOptions{Filters: f})
	errs = append(errs, err)
	for _, v := range vs.Volumes {
		left = append(left, "volume "+v.Name)
	}
	if err := errors.Join(errs...); err != nil {
		left = append(left, "engine: "+err.Error())
	}
	return left
}

// TestConformance runs the platform suite on the Swarm platform with Redis: every storage and
// the host and overlay networks.
func TestConformance(t *testing.T) {
	e := newEnv(t)
	var d dbms.DBMS = redis.Redis{}
	platformtest.Run(t, platformtest.Config{
		Platform: e.p, DBMS: d, WorkRoot: e.root, Experiment: fmt.Sprintf("pt-swarm-%d", os.Getpid()),
		Choices: []platform.Choice{{Storage: StorageBind, Network: NetworkHost}, {Storage: StorageVolume, Network: NetworkOverlay},
			{Storage: StorageTmpfs, Network: NetworkHost}},
		Resources:   resource.Limits{CPUs: 1, Cpuset: "1", MemoryBytes: 512 << 20, CPUWeight: 200, WriteBps: 64 << 20},
		StorageOpts: sizes,
		Leftovers:   e.leftovers,
	})
}
