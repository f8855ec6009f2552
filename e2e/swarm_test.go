package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/flock"
	"github.com/boxbench/boxbench/internal/testenv"
)

const swarmSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-swarm
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: 2s, warmup: 1s}
dataset: {records: 2000, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 512MiB}
matrix:
  zip:
    platform: [native, swarm, swarm,   swarm]
    storage:  [bind,   bind,  volume,  bind]
    network:  [host,   host,  overlay, vip]
repetitions: 1
baseline: {platform: native, storage: bind, network: host}
`

// swarmState is the engine's swarm state as docker info prints it ("inactive", "active").
func swarmState(t *testing.T) string {
	out, err := exec.Command("docker", "info", "--format", "{{.Swarm.LocalNodeState}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestSwarm runs Redis natively and as Swarm services on the host network and on an overlay
// network, whose client runs in a container on the overlay (boxbench agent, the binary itself
// bind-mounted): every run is ok, the overlay run records where its client ran, the vip cell
// either runs or is skipped with the kernel's reason, no service or network is left, and the
// swarm is as it was before.
func TestSwarm(t *testing.T) {
	testenv.NeedDocker(t)
	// platform/swarm's tests make and leave swarms too: one test process at a time (the lock
	// file of platform/swarm's tests).
	if err := os.MkdirAll("/var/lib/boxbench", 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := flock.Lock(context.Background(), "/var/lib/boxbench/swarm-test.lock", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	e := setup(t, "swarm", "2s", 1)
	before := swarmState(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := e.runSpec(ctx, t, swarmSpec)
	got, b := e.results(ctx, t, out)
	t.Logf("%s", b)
	if len(got.Runs) < 3 {
		t.Fatalf("want at least 3 runs, got %d", len(got.Runs))
	}
	for _, r := range got.Runs {
		if r.Status != "ok" || r.Throughput == nil || *r.Throughput <= 0 {
			t.Errorf("run %s: status %s throughput %v", r.ID, r.Status, r.Throughput)
		}
		remote := strings.Contains(r.ID, "network=overlay") || strings.Contains(r.ID, "network=vip")
		if site := r.Env["client_site"]; remote != strings.Contains(site, "container on overlay network") {
			t.Errorf("run %s: client site %q", r.ID, site)
		}
	}
	for _, s := range got.Skipped {
		if !strings.Contains(s.ID, "network=vip") || !strings.Contains(s.Reason, "IP_VS") {
			t.Errorf("cell %s skipped: %s", s.ID, s.Reason)
		}
	}
	if after := swarmState(t); after != before {
		t.Errorf("swarm %s before the experiment, %s after", before, after)
	}
	for _, what := range [][]string{{"service", "ls", "--filter", "label=boxbench"}, {"network", "ls", "--filter", "label=boxbench", "--format", "{{.Name}}"}} {
		if before != "active" && what[0] == "service" {
			continue // no swarm: no services to list
		}
		o, err := exec.Command("docker", what...).Output()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(o), "e2e-swarm") {
			t.Errorf("left: docker %s: %s", strings.Join(what, " "), o)
		}
	}
}
