package docker

import (
	"context"
	"errors"
	"fmt"
	"github.com/boxbench/boxbench/platform"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/postgresql"
	"github.com/boxbench/boxbench/dbms/redis"
)

// TestNotReady: a server that cannot start fails Provision with its log in the error, and
// leaves nothing behind.
func TestNotReady(t *testing.T) {
	e := newEnv(t, "postgresql")
	var d dbms.DBMS = postgresql.PostgreSQL{}
	seed := filepath.Join(e.root, "bad-seed")
	if err := os.MkdirAll(seed, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seed, "PG_VERSION"), []byte("9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.request(d, "bad", StorageBind, NetworkDirect)
	r.Seed = &platform.Snapshot{Key: "seed", Dir: seed}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := e.p.Provision(ctx, r)
	if err == nil {
		b.Teardown(ctx)
		t.Fatal("a data directory of PostgreSQL 9 started under 15")
	}
	t.Logf("provision failed as expected: %v", err)
	if !strings.Contains(err.Error(), "server log (tail)") || !strings.Contains(err.Error(), "incompatible") {
		t.Errorf("error without the server's log: %v", err)
	}
}

// TestInterrupted cancels Provision at several points (as Ctrl-C does): each attempt fails with
// the cancellation and leaves nothing behind (checked by the env at the end).
func TestInterrupted(t *testing.T) {
	e := newEnv(t, "postgresql")
	var d dbms.DBMS = postgresql.PostgreSQL{}
	for i, after := range []time.Duration{50 * time.Millisecond, 300 * time.Millisecond, 800 * time.Millisecond, 1500 * time.Millisecond} {
		for _, st := range []string{StorageVolume, StorageBlock} {
			r := e.request(d, fmt.Sprintf("cancel-%d-%s", i, st), st, NetworkPublished)
			ctx, cancel := context.WithTimeout(context.Background(), after)
			b, err := e.p.Provision(ctx, r)
			cancel()
			if err == nil {
				t.Logf("%s: ready within %s", r.Run, after)
				teardown(t, b, r)
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
}

// TestCleanup leaves two boxes of a "crashed" experiment and one of a live one, and checks that
// Cleanup removes exactly the crashed experiment's containers, volume, mounts and loop device.
func TestCleanup(t *testing.T) {
	e := newEnv(t, "redis")
	var d dbms.DBMS = redis.Redis{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	live := e.request(d, "live", StorageBind, NetworkHost)
	keep := provision(ctx, t, e.p, live)
	defer teardown(t, keep, live)
	crashedExp := e.exp + "-crashed"
	for _, st := range []string{StorageVolume, StorageBlock} {
		r := e.request(d, "crash-"+st, st, NetworkPublished)
		r.Experiment = crashedExp
		r.WorkDir = filepath.Join(e.root, crashedExp, r.Run)
		provision(ctx, t, e.p, r) // and never torn down, as when boxbench is killed
	}
	done, err := e.p.Cleanup(ctx, e.root, func(exp string) bool { return exp == crashedExp })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("removed: %v", done)
	var ctrs, vols, mounts, loops, dirs int
	for _, s := range done {
		switch {
		case strings.HasPrefix(s, "container "):
			ctrs++
		case strings.HasPrefix(s, "volume "):
			vols++
		case strings.HasPrefix(s, "mount "):
			mounts++
		case strings.HasPrefix(s, "loop device "):
			loops++
		case strings.HasPrefix(s, "directory "):
			dirs++
		}
	}
	if ctrs != 2 || vols != 1 || mounts != 1 || loops != 1 || dirs != 0 {
		t.Errorf("removed %d containers, %d volumes, %d mounts, %d loop devices, %d directories; want 2, 1, 1, 1, 0",
			ctrs, vols, mounts, loops, dirs)
	}
	// What is left of the crashed runs is plain files; removing them is the runner's business.
	if err := os.RemoveAll(filepath.Join(e.root, crashedExp)); err != nil {
		t.Error(err)
	}
	if err := keep.Stop(ctx); err != nil {
		t.Errorf("the live experiment's box was touched: %v", err)
	}
	crashed := &env{engine: e.engine, exp: crashedExp, root: e.root}
	crashed.assertClean(t)
}

// noServer is Redis whose server binary does not exist in the image: the engine creates the
// container, and the runtime refuses to start it.
type noServer struct{ dbms.DBMS }

func (noServer) StartCommand(dbms.Layout) []string { return []string{"/nonexistent/redis-server"} }

// TestStartFails: a container the runtime cannot start (here: no such executable; in a cgroup v2
// guest: the systemd cgroup driver without systemd) fails Provision with the engine's error, and
// the undo returns and removes everything. Before, Stop waited for an exit of a container that
// never ran, and Provision never returned.
func TestStartFails(t *testing.T) {
	e := newEnv(t, "redis")
	var d dbms.DBMS = redis.Redis{}
	r := e.request(noServer{d}, "nostart", StorageBind, NetworkHost)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		b, err := e.p.Provision(ctx, r)
		if err == nil {
			teardown(t, b, r)
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Minute): // a hang detector, far beyond any engine call
		t.Fatal("Provision did not return after a failed container start")
	}
	if err == nil {
		t.Fatal("a container without its server binary started")
	}
	t.Logf("provision failed as expected: %v", err)
	if !strings.Contains(err.Error(), "start container") || !strings.Contains(err.Error(), "/nonexistent/redis-server") {
		t.Errorf("error without the engine's reason: %v", err)
	}
}
