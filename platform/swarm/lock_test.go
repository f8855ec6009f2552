package swarm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/flock"
)

// An interrupted run's exit releases the swarm with a context that is never cancelled
// (runner's deferred cleanup). While another process holds the swarm lock, the release must
// give up after lockWait, name the holder and say the state is left for doctor --cleanup,
// instead of waiting for ever. No engine is needed: the lock comes before any engine call.
func TestReleaseGivesUpOnAHeldLock(t *testing.T) {
	dir, wait := StateDir, lockWait
	StateDir, lockWait = t.TempDir(), 300*time.Millisecond
	t.Cleanup(func() { StateDir, lockWait = dir, wait })
	unlock, ok, err := flock.TryLock(filepath.Join(StateDir, lockFile))
	if err != nil || !ok {
		t.Fatalf("hold the lock: %v %v", ok, err)
	}
	defer unlock()

	done := make(chan error, 1)
	go func() {
		_, err := (&Platform{}).release(context.WithoutCancel(context.Background()), false)
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second): // a bound on a wait that, with the defect, never ends
		t.Fatal("release waited on the held swarm lock without bound")
	}
	for _, want := range []string{fmt.Sprintf("held by pid %d (", os.Getpid()), "doctor --cleanup"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("release with the lock held: %v; want an error containing %q", err, want)
		}
	}
}
