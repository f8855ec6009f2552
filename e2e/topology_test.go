package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// topologySpec: a cluster of nodes with a short load phase on the matrix's platforms.
func topologySpec(name, dbms, topology, matrix string) spec {
	return spec{Name: name, DBMS: dbms, Topology: topology, Records: 200, Reps: "1",
		Workload: "{type: ycsb, mix: write-heavy, threads: 4, duration: 2s, warmup: 1s}",
		Limits:   "{cpus: 0.5, memory: 256MiB}", Matrix: matrix}
}

// okRuns runs e's spec to n stored runs within ctx and returns the results directory and the
// runs that are ok with a throughput; every other run is an error of the test.
func (e *env) okRuns(ctx context.Context, t *testing.T, n int) (string, []storedRun) {
	t.Helper()
	out, res, _ := e.runStored(ctx, t, n)
	var ok []storedRun
	for _, r := range res.Runs {
		if r.Status != "ok" || r.Throughput == nil || *r.Throughput <= 0 {
			t.Errorf("run %s: status %s %s, throughput %v", r.ID, r.Status, r.Reason, r.Throughput)
			continue
		}
		ok = append(ok, r)
	}
	return out, ok
}

// etcdUp: the run's etcd cluster said its three members were up, and which one led.
func etcdUp(t *testing.T, r storedRun) {
	t.Helper()
	if f := r.Facts; f["cluster_members"] != "n1,n2,n3" || f["cluster_leader"] == "" {
		t.Errorf("run %s: etcd members %q leader %q", r.ID, f["cluster_members"], f["cluster_leader"])
	}
}

// membersApart: each member n1, n2, n3 of the run's cluster ran where want(i) says (the start of
// its node_nN_ran_on fact), no two in one place.
func membersApart(t *testing.T, r storedRun, want func(i int) string) {
	t.Helper()
	seen := map[string]bool{}
	for i, n := range []string{"n1", "n2", "n3"} {
		on := r.Facts["node_"+n+"_ran_on"]
		if !strings.HasPrefix(on, want(i)) || seen[on] {
			t.Errorf("run %s: member %s ran on %q, want %s… (a place of its own)", r.ID, n, on, want(i))
		}
		seen[on] = true
	}
}

// TestTopology runs a 3-node etcd cluster and a Redis primary with two replicas natively, in
// Docker on the host network and on a cluster bridge network: every run ok, each cluster said
// all its members were up (the facts it reported), telemetry has every node, and nothing is
// left.
func TestTopology(t *testing.T) {
	parallel(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "etcd", "redis-server")
	testenv.HoldShared(t, "swarm") // its bridge cluster's nodes resolve each other by name
	s := topologySpec("topology", "-", "{nodes: 3}",
		"  dbms: [etcd, redis]\n  zip: {platform: [native, docker, docker], network: [host, host, bridge-direct]}")
	s.Extra = "baseline: {platform: native, network: host}\n"
	e := newEnv(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, runs := e.okRuns(ctx, t, 6)
	for _, r := range runs {
		f := r.Facts
		if f["topology_nodes"] != "3" || strings.Count(f["topology_endpoints"], "=") != 3 {
			t.Errorf("run %s: topology facts %q %q", r.ID, f["topology_nodes"], f["topology_endpoints"])
		}
		switch {
		case strings.Contains(r.ID, "dbms=etcd"):
			etcdUp(t, r)
		default:
			if f["cluster_replicas_online"] != "2" {
				t.Errorf("run %s: redis replicas online %q", r.ID, f["cluster_replicas_online"])
			}
		}
	}
	assertNodeLines(t, e.report(ctx, t, out, ""), 3)
}

// assertNodeLines: the report has a telemetry line per node (sources db, db-n2, …).
func assertNodeLines(t *testing.T, rep []byte, nodes int) {
	t.Helper()
	for i := 1; i <= nodes; i++ {
		if !bytes.Contains(rep, []byte(fmt.Sprintf("node n%d", i))) {
			t.Errorf("the report has no line for node n%d:\n%s", i, rep)
		}
	}
}

// TestTopologyPostgreSQL: a primary with two synchronous streaming standbys, natively and in
// Docker on a cluster network: both runs ok, every standby streaming as a quorum candidate.
func TestTopologyPostgreSQL(t *testing.T) {
	parallel(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "/usr/lib/postgresql/15/bin/postgres")
	// Its Docker standbys find the primary by name: beside TestSwarm, whose swarm init and
	// leave wiped the bridge networks' names (testenv.HoldShared), they twice never did.
	testenv.HoldShared(t, "swarm")
	s := topologySpec("topology-pg", "postgresql", "{nodes: 3, synchronous: true}",
		"  zip: {platform: [native, docker], network: [host, bridge-direct]}")
	s.Extra = "baseline: {platform: native, network: host}\n"
	e := newEnv(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, runs := e.okRuns(ctx, t, 2)
	for _, r := range runs {
		if got := r.Facts["cluster_standbys"]; got != "n2=streaming/quorum n3=streaming/quorum" {
			t.Errorf("run %s: standbys %q", r.ID, got)
		}
	}
}

// crashCluster kills boxbench (kill -9) while the env's 3-node cluster is measured: nodes
// counts the cluster's running nodes, which must all be orphaned; `doctor --cleanup` then
// removes every node (env.assertClean: processes, cgroups, containers, services, pods, the
// cluster's network, work and socket directories) and must name each of names.
func crashCluster(t *testing.T, e *env, limit time.Duration, nodes func(exp string) int, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit+5*time.Minute)
	defer cancel()
	r := e.start(ctx, t)
	r.waitFor(t, limit, "the cluster was never measured", func() bool {
		return r.experiment() != "" && r.inPhase("warmup+measure")
	})
	if n := nodes(r.exp); n != 3 {
		t.Errorf("%d nodes running while measured, want 3", n)
	}
	r.onKilled = func() {
		if n := nodes(r.exp); n != 3 {
			t.Errorf("kill -9 of boxbench left %d nodes running; the test needs all 3 orphaned", n)
		}
	}
	b := r.crash(ctx, t, syscall.SIGKILL)
	for _, n := range names {
		if !bytes.Contains(b, []byte(n)) {
			t.Errorf("doctor --cleanup did not name %s", n)
		}
	}
	e.assertClean(t)
}

// TestTopologyCrashCleanup kills boxbench while a 3-member etcd cluster is measured, natively
// and in Docker on a cluster network; `doctor --cleanup` then removes every node.
func TestTopologyCrashCleanup(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ platform, network string }{{"native", "host"}, {"docker", "bridge-direct"}} {
		t.Run(c.platform, func(t *testing.T) {
			parallel(t)
			testenv.NeedCommands(t, "etcd")
			if c.platform == "docker" {
				testenv.NeedDocker(t)
				testenv.HoldShared(t, "swarm") // the nodes resolve each other by name
			}
			s := topologySpec("topocrash-"+c.platform, "etcd", "{nodes: 3}",
				"  platform: ["+c.platform+"]\n  network: ["+c.network+"]")
			s.Workload = strings.Replace(s.Workload, "duration: 2s", "duration: 60s", 1)
			s.Reps = "1"
			e := newEnv(t, s)
			crashCluster(t, e, 3*time.Minute, func(exp string) int {
				if c.platform == "docker" {
					return e.dockerContainers(exp, "", false)
				}
				n := 0
				m, _ := filepath.Glob("/sys/fs/cgroup/memory/boxbench/" + exp + "/r0001-n*/cgroup.procs")
				for _, f := range m {
					if b, _ := os.ReadFile(f); len(bytes.TrimSpace(b)) > 0 {
						n++
					}
				}
				return n
			})
		})
	}
}
