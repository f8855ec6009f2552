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

	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/flock"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
	"github.com/boxbench/boxbench/testkit/platformtest"
	"github.com/boxbench/boxbench/testkit/testenv"
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
	e.p.Configure(Section{AcceptBridgeDNSLoss: true})
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

// leftovers lists what of experiment exp the engine and the host still hold: the platform's
// own lister (its services) and the docker platform's (the engine's containers, networks and
// volumes).
func (e *env) leftovers(ctx context.Context, exp string) []string {
	left := platformtest.HostLeftovers(e.root, exp)
	services, err1 := e.p.Info().Leftovers.Leftovers(ctx, e.root, exp)
	objects, err2 := docker.EngineLeftovers(ctx, e.engine, exp)
	left = append(append(left, services...), objects...)
	if err := errors.Join(err1, err2); err != nil {
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
