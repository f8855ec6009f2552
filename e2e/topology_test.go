package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/testenv"
)

// topologySpec: a 3-node etcd cluster and a Redis primary with two replicas, natively, in
// Docker on the host network and on a cluster bridge network, each with a short load phase.
const topologySpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-topology
topology: {nodes: 3}
workload: {type: ycsb, mix: write-heavy, threads: 4, duration: 2s, warmup: 1s}
dataset: {records: 200, fieldCount: 4, fieldLength: 50}
limits: {cpus: 0.5, memory: 256MiB}
matrix:
  dbms: [etcd, redis]
  zip: {platform: [native, docker, docker], network: [host, host, bridge-direct]}
repetitions: 1
quietStart: {timeout: 1s}
baseline: {platform: native, network: host}
`

// TestTopology runs the clusters end to end: every run ok, each cluster said all its members
// were up (the facts it reported), telemetry has every node, and nothing is left.
func TestTopology(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "etcd", "redis-server")
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	t.Cleanup(func() { assertNoLeftoversOf(t, e.work, "e2e-topology") })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := e.runSpec(ctx, t, topologySpec)
	res, b := e.results(ctx, t, out)
	if len(res.Runs) != 6 {
		t.Fatalf("%d runs stored, want 6:\n%s", len(res.Runs), b)
	}
	for _, r := range res.Runs {
		if r.Status != "ok" {
			t.Errorf("run %s: %s %s", r.ID, r.Status, r.Reason)
			continue
		}
		f := r.Facts
		if f["topology_nodes"] != "3" || strings.Count(f["topology_endpoints"], "=") != 3 {
			t.Errorf("run %s: topology facts %q %q", r.ID, f["topology_nodes"], f["topology_endpoints"])
		}
		switch {
		case strings.Contains(r.ID, "dbms=etcd"):
			if f["cluster_members"] != "n1,n2,n3" || f["cluster_leader"] == "" {
				t.Errorf("run %s: etcd members %q leader %q", r.ID, f["cluster_members"], f["cluster_leader"])
			}
		default:
			if f["cluster_replicas_online"] != "2" {
				t.Errorf("run %s: redis replicas online %q", r.ID, f["cluster_replicas_online"])
			}
		}
	}
	// Telemetry per node: the report's per-node lines come from sources db, db-n2, db-n3.
	rep, err := e.boxbench(ctx, "report", out).CombinedOutput()
	if err != nil {
		t.Fatalf("report: %v\n%s", err, rep)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if !bytes.Contains(rep, []byte("node "+n)) {
			t.Errorf("the report has no line for node %s:\n%s", n, rep)
		}
	}
}

// TestTopologyCrashCleanup kills boxbench (kill -9) while a 3-member etcd cluster is measured,
// natively and in Docker on a cluster network; `doctor --cleanup` then removes every node
// (processes, cgroups, containers, the cluster's network, work and socket directories).
func TestTopologyCrashCleanup(t *testing.T) {
	for _, c := range []struct{ platform, network string }{{"native", "host"}, {"docker", "bridge-direct"}} {
		t.Run(c.platform, func(t *testing.T) {
			testenv.NeedRoot(t)
			testenv.NeedCommands(t, "etcd")
			if c.platform == "docker" {
				testenv.NeedDocker(t)
			}
			e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
			e.specFile = filepath.Join(e.dir, "spec.yaml")
			name := "e2e-topocrash-" + c.platform
			spec := fmt.Sprintf(`apiVersion: boxbench/v1alpha1
kind: Experiment
name: %s
dbms: etcd
topology: {nodes: 3}
workload: {type: ycsb, mix: write-heavy, threads: 2, duration: 60s, warmup: 1s}
dataset: {records: 100, fieldCount: 4, fieldLength: 50}
limits: {cpus: 0.5, memory: 256MiB}
matrix:
  platform: [%s]
  network: [%s]
repetitions: 1
quietStart: {timeout: 1s}
`, name, c.platform, c.network)
			if err := os.WriteFile(e.specFile, []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd, log := e.start(ctx, t, filepath.Join(e.dir, "out"))
			var exp string
			waitFor(t, cmd, log, 3*time.Minute, "the cluster was never measured", func() bool {
				if m, _ := filepath.Glob(filepath.Join(e.work, "locks", name+"-*.lock")); len(m) > 0 {
					exp = strings.TrimSuffix(filepath.Base(m[0]), ".lock")
				}
				return exp != "" && strings.Contains(lastPhase(log.String()), "msg=warmup+measure ")
			})
			nodes := nodeCount(exp, c.platform)
			if nodes != 3 {
				t.Errorf("%d nodes running while measured, want 3", nodes)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if n := nodeCount(exp, c.platform); n != nodes {
				t.Errorf("kill -9 of boxbench took %d nodes with it; the test needs them orphaned", nodes-n)
			}
			b, err := e.boxbench(ctx, "doctor", "--cleanup").CombinedOutput()
			if err != nil {
				t.Fatalf("doctor --cleanup: %v\n%s", err, b)
			}
			t.Logf("doctor --cleanup:\n%s", b)
			assertNoFaultLeftovers(t, e.work, exp)
			dockerLeftovers(t, e.work, exp)
			for _, n := range []string{"n1", "n2", "n3"} {
				h := sha256.Sum256([]byte(filepath.Join(e.work, exp, "r0001-"+n)))
				if dir := filepath.Join(os.TempDir(), "boxbench-"+hex.EncodeToString(h[:6])); exists(dir) {
					t.Errorf("socket directory of node %s left: %s", n, dir)
				}
			}
		})
	}
}

// nodeCount is how many of exp's nodes run: processes in their cgroups natively, running
// labelled containers in Docker.
func nodeCount(exp, platform string) int {
	if platform == "docker" {
		out, _ := exec.Command("docker", "ps", "-q", "--filter", "label=boxbench.experiment="+exp,
			"--filter", "label=boxbench.role=server").Output()
		return len(strings.Fields(string(out)))
	}
	n := 0
	m, _ := filepath.Glob("/sys/fs/cgroup/memory/boxbench/" + exp + "/r0001-n*/cgroup.procs")
	for _, f := range m {
		if b, _ := os.ReadFile(f); len(bytes.TrimSpace(b)) > 0 {
			n++
		}
	}
	return n
}

// TestTopologyPostgreSQL: a primary with two synchronous streaming standbys, natively and in
// Docker on a cluster network: both runs ok, every standby streaming as a quorum candidate.
func TestTopologyPostgreSQL(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "/usr/lib/postgresql/15/bin/postgres")
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	t.Cleanup(func() { assertNoLeftoversOf(t, e.work, "e2e-topology-pg") })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	spec := strings.NewReplacer("name: e2e-topology", "name: e2e-topology-pg",
		"topology: {nodes: 3}", "dbms: postgresql\ntopology: {nodes: 3, synchronous: true}",
		"  dbms: [etcd, redis]\n", "",
		"[native, docker, docker], network: [host, host, bridge-direct]", "[native, docker], network: [host, bridge-direct]").Replace(topologySpec)
	out := e.runSpec(ctx, t, spec)
	res, b := e.results(ctx, t, out)
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs stored, want 2:\n%s", len(res.Runs), b)
	}
	for _, r := range res.Runs {
		if r.Status != "ok" {
			t.Errorf("run %s: %s %s", r.ID, r.Status, r.Reason)
		} else if got := r.Facts["cluster_standbys"]; got != "n2=streaming/quorum n3=streaming/quorum" {
			t.Errorf("run %s: standbys %q", r.ID, got)
		}
	}
}

// TestTopologyCassandra: a 3-node Cassandra ring (replication factor 2, consistency QUORUM)
// natively and in Docker on a cluster network, one ring per platform, each with a short load
// phase: both runs ok, the ring reported all three nodes on one schema, and the facts carry
// the replication factor and consistency.
func TestTopologyCassandra(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	t.Cleanup(func() { assertNoLeftoversOf(t, e.work, "e2e-topology-ring") })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	spec := strings.NewReplacer("name: e2e-topology", "name: e2e-topology-ring",
		"topology: {nodes: 3}", "dbms: cassandra\ntopology: {nodes: 3, replicationFactor: 2}",
		"threads: 4,", "threads: 4, consistency: QUORUM,",
		"limits: {cpus: 0.5, memory: 256MiB}", "limits: {memory: 1GiB}",
		"  dbms: [etcd, redis]\n", "",
		"[native, docker, docker], network: [host, host, bridge-direct]", "[native, docker], network: [host, bridge-direct]").Replace(topologySpec)
	out := e.runSpec(ctx, t, spec)
	res, b := e.results(ctx, t, out)
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs stored, want 2:\n%s", len(res.Runs), b)
	}
	for _, r := range res.Runs {
		f := r.Facts
		switch {
		case r.Status != "ok":
			t.Errorf("run %s: %s %s", r.ID, r.Status, r.Reason)
		case f["cluster_members"] != "n1,n2,n3" || f["cluster_schema_version"] == "" ||
			f["cluster_replication_factor"] != "2" || f["cluster_consistency"] != "QUORUM":
			t.Errorf("run %s: ring facts members %q schema %q rf %q consistency %q", r.ID, f["cluster_members"],
				f["cluster_schema_version"], f["cluster_replication_factor"], f["cluster_consistency"])
		case r.Throughput == nil || *r.Throughput <= 0:
			t.Errorf("run %s: no throughput", r.ID)
		}
	}
	// Every node's JVM was asked what it did in the window (dbms.Observer on each node).
	var got struct {
		Runs []struct {
			ID     string
			Result struct {
				Metrics map[string]float64 `json:"metrics"`
			} `json:"result"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Runs {
		m := r.Result.Metrics
		for _, node := range []string{"server_", "server_n2_", "server_n3_"} {
			if m[node+"heap_used_bytes"] <= 0 || m[node+"window_seconds"] <= 0 {
				t.Errorf("run %s: %sheap_used_bytes %v, %swindow_seconds %v", r.ID, node, m[node+"heap_used_bytes"], node, m[node+"window_seconds"])
			}
		}
	}
}
