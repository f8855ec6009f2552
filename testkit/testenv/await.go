package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Prerequisites the suite's runner (scripts/test.sh) may still be preparing when the tests start.
const (
	LocalCluster = "local-cluster" // scripts/kube-local.sh's cluster: the Kubernetes build, then up
	GuestImages  = "guest-images"  // Redis's guest images (boxbench images build --vm --dbms redis)
	CoreDNS      = "coredns"       // the multi-node cluster's DNS (build_coredns of scripts/kube-multi.sh)
	Flannel      = "flannel"       // its VXLAN CNI (build_flannel of scripts/kube-multi.sh)
)

// awaitBound is how long a test waits for one prerequisite: longer than its cold build on a
// 2-vCPU host (the Kubernetes build took 17 min in the cold run of 2026-11-27), shorter than go
// test's -timeout.
const awaitBound = 35 * time.Minute

// Await waits while the suite's runner is still preparing what the test needs next. The runner
// (scripts/test.sh) starts the tests before its slow preparations end, so that the tests that
// need neither the local cluster nor a guest image run while those build: it names a directory
// in BOXBENCH_AWAIT and keeps NAME.pending there until NAME is ready, then writes NAME.failed
// (with its reason) if it could not be made. Without BOXBENCH_AWAIT (a package's tests run
// alone, after `make setup` and the part brought up by hand) Await returns at once, and the
// test's own check says what is missing.
func Await(t testing.TB, name string) {
	t.Helper()
	dir := os.Getenv("BOXBENCH_AWAIT")
	if dir == "" {
		return
	}
	deadline := time.Now().Add(awaitBound)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok && end.Add(-time.Minute).Before(deadline) {
			deadline = end.Add(-time.Minute)
		}
	}
	if err := await(dir, name, deadline, 2*time.Second, t.Logf); err != nil {
		t.Fatal(err)
	}
}

// await is Await's wait: it polls every interval until NAME.pending is gone or the deadline
// passes, and reports NAME.failed's reason as an error.
func await(dir, name string, deadline time.Time, interval time.Duration, logf func(string, ...any)) error {
	pending := filepath.Join(dir, name+".pending")
	start, said := time.Now(), false
	for exists(pending) {
		if !said {
			logf("waiting for the suite's %s (%s)", name, pending)
			said = true
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the suite's %s was not ready after %s (%s remains)", name, time.Since(start).Round(time.Second), pending)
		}
		time.Sleep(interval)
	}
	if said {
		logf("the suite's %s was ready after %s", name, time.Since(start).Round(time.Second))
	}
	if why, err := os.ReadFile(filepath.Join(dir, name+".failed")); err == nil {
		return fmt.Errorf("the suite's %s failed: %s", name, strings.TrimSpace(string(why)))
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
