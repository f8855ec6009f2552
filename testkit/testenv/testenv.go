// Package testenv decides whether a test may skip for lack of a host part. Outside CI a test
// skips when the host truly lacks the part; in CI (BOXBENCH_CI=1) the same lack is a failure,
// so integration tests cannot silently stop running.
package testenv

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// InCI reports whether missing host parts must fail tests.
func InCI() bool { return os.Getenv("BOXBENCH_CI") != "" }

// Skip skips (or, in CI, fails) the test with the reason.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if InCI() {
		t.Fatalf("BOXBENCH_CI is set, so this cannot be skipped: %s", reason)
	}
	t.Skip(reason)
}

// NeedRoot requires root (cgroups, mounts, loop devices) and a non -short run.
func NeedRoot(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test; -short")
	}
	if os.Geteuid() != 0 {
		Skip(t, "needs root for cgroups, mounts and loop devices")
	}
}

// NeedCommands requires executables.
func NeedCommands(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			Skip(t, n+" is not installed (see README: make setup)")
		}
	}
}

// NeedDocker requires a reachable Docker engine.
func NeedDocker(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test; -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := exec.CommandContext(ctx, "docker", "info").Run(); err != nil {
		Skip(t, "no reachable Docker engine: "+err.Error())
	}
}

// WorkRoot returns a fresh work root under /var/tmp/boxbench-test, traversable by the database
// system users (a t.TempDir is private to root), and removes it when the test ends.
func WorkRoot(t testing.TB) string {
	t.Helper()
	if err := os.MkdirAll("/var/tmp/boxbench-test", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp/boxbench-test", "work-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
