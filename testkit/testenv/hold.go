package testenv

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/internal/flock"
)

// lockDir holds the tests' resource locks: the same files in every test process.
const lockDir = "/var/lib/boxbench"

// Hold takes the lock of a resource that tests share — the engine's swarm, the local cluster, a
// cpu the client is pinned to, the TEST-NET subnet of a test's own dockerd — until the test
// ends. A file lock (lockDir/RESOURCE-test.lock): tests of other packages (other processes) take
// the same one where they use the resource too (platform/swarm's, platform/kubernetes's). Tests
// that hold none run in parallel.
func Hold(t testing.TB, resource string) { hold(t, resource, flock.Lock) }

// HoldShared takes the lock of resource shared until the test ends: any number of such holders
// at once, none while a test holds it with Hold. For tests that only need the resource to stay
// as it is: a Docker cluster on a bridge network holds "swarm" so, because its nodes find each
// other through the engine's embedded DNS, and dockerd 20.10 loses the names of every bridge
// network that exists when it leaves a swarm (moby/moby#45144; reproduced here: a swarm init
// and leave while PostgreSQL's standbys waited for their primary "n1" made e2e's
// TestTopologyPostgreSQL fail beside TestSwarm).
func HoldShared(t testing.TB, resource string) { hold(t, resource, flock.Shared) }

func hold(t testing.TB, resource string, lock func(context.Context, string, func()) (func(), error)) {
	t.Helper()
	if err := os.MkdirAll(lockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := lock(context.Background(), filepath.Join(lockDir, resource+"-test.lock"), func() {
		t.Logf("waiting for the %s (another test holds it)", resource)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
}
