package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/flock"
	"github.com/boxbench/boxbench/internal/testenv"
)

// swarmTopologySpec: a cluster as Swarm services, one per node, on the host network and on a
// cluster overlay network (the client in a container on it), with a short load phase.
const swarmTopologySpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: %s
dbms: %s
topology: {nodes: %d}
workload: {type: ycsb, mix: write-heavy, threads: 4, duration: 2s, warmup: 1s}
dataset: {records: 200, fieldCount: 4, fieldLength: 50}
limits: {cpus: 0.5, memory: 256MiB}
matrix:
  zip: {platform: [%s], network: [%s], storage: [%s]}
repetitions: 1
quietStart: {timeout: 1s}
baseline: {platform: swarm, network: %s}
`

// swarmLock serialises the tests that make and leave swarms (platform/swarm's and TestSwarm's
// lock file).
func swarmLock(t *testing.T) {
	if err := os.MkdirAll("/var/lib/boxbench", 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := flock.Lock(context.Background(), "/var/lib/boxbench/swarm-test.lock", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
}

// TestSwarmTopology runs a 3-member etcd cluster (swarm host and overlay) and a Redis primary
// with a replica (overlay) as one Swarm service per node: every run ok, the cluster said all
// its members were up, the overlay runs' client ran in a container on the cluster's network and
// knew every etcd member there, the report has every node, and neither a service nor a network
// is left, the swarm as it was.
func TestSwarmTopology(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	swarmLock(t)
	before := swarmState(t)
	for _, c := range []struct {
		dbms            string
		nodes           int
		platforms, nets string
		storages        string
	}{
		{"etcd", 3, "swarm, swarm", "host, overlay", "bind, volume"},
		{"redis", 2, "swarm", "overlay", "bind"},
	} {
		t.Run(c.dbms, func(t *testing.T) {
			name := "e2e-swtopo-" + c.dbms
			e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
			e.specFile = filepath.Join(e.dir, "spec.yaml")
			t.Cleanup(func() { assertNoLeftoversOf(t, e.work, name) })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			out := e.runSpec(ctx, t, fmt.Sprintf(swarmTopologySpec, name, c.dbms, c.nodes, c.platforms, c.nets, c.storages, strings.Split(c.nets, ",")[0]))
			res, b := e.results(ctx, t, out)
			if want := strings.Count(c.platforms, ",") + 1; len(res.Runs) != want {
				t.Fatalf("%d runs stored, want %d:\n%s", len(res.Runs), want, b)
			}
			for _, r := range res.Runs {
				if r.Status != "ok" {
					t.Errorf("run %s: %s %s", r.ID, r.Status, r.Reason)
					continue
				}
				f := r.Facts
				if f["topology_nodes"] != fmt.Sprint(c.nodes) || strings.Count(f["topology_endpoints"], "=") != c.nodes {
					t.Errorf("run %s: topology facts %q %q", r.ID, f["topology_nodes"], f["topology_endpoints"])
				}
				overlay := strings.Contains(r.ID, "network=overlay")
				if site := r.Env["client_site"]; overlay != strings.Contains(site, "container on overlay network "+f["topology_network"]) || overlay && f["topology_network"] == "" {
					t.Errorf("run %s: client site %q, cluster network %q", r.ID, site, f["topology_network"])
				}
				switch c.dbms {
				case "etcd":
					if f["cluster_members"] != "n1,n2,n3" || f["cluster_leader"] == "" {
						t.Errorf("run %s: etcd members %q leader %q", r.ID, f["cluster_members"], f["cluster_leader"])
					}
					if overlay && strings.Count(f["client_endpoints"], ":2379") != 3 {
						t.Errorf("run %s: the client at the site does not know every member: %q", r.ID, f["client_endpoints"])
					}
				default:
					if f["cluster_replicas_online"] != "1" {
						t.Errorf("run %s: redis replicas online %q", r.ID, f["cluster_replicas_online"])
					}
				}
			}
			rep, err := e.boxbench(ctx, "report", out).CombinedOutput()
			if err != nil {
				t.Fatalf("report: %v\n%s", err, rep)
			}
			for i := 1; i <= c.nodes; i++ {
				if !strings.Contains(string(rep), fmt.Sprintf("node n%d", i)) {
					t.Errorf("the report has no line for node n%d:\n%s", i, rep)
				}
			}
			swarmLeftovers(t, name)
		})
	}
	if after := swarmState(t); after != before {
		t.Errorf("swarm %s before, %s after", before, after)
	}
}

// swarmLeftovers: no service (while a swarm is active) and no network of experiments named
// prefix….
func swarmLeftovers(t *testing.T, prefix string) {
	t.Helper()
	for _, what := range [][]string{{"service", "ls", "--filter", "label=boxbench", "--format", "{{.Name}}"},
		{"network", "ls", "--filter", "label=boxbench", "--format", "{{.Name}}"}} {
		if what[0] == "service" && swarmState(t) != "active" {
			continue
		}
		o, err := exec.Command("docker", what...).Output()
		if err != nil {
			t.Fatalf("docker %s: %v", strings.Join(what, " "), err)
		}
		if strings.Contains(string(o), prefix) {
			t.Errorf("left: docker %s: %s", strings.Join(what, " "), o)
		}
	}
}

// TestSwarmTopologyCrashCleanup kills boxbench (kill -9) while a 3-member etcd cluster of
// Swarm services on a cluster overlay network is measured; `doctor --cleanup` then removes
// every node's service and task container, the cluster's network and the work directories,
// and leaves the swarm boxbench made.
func TestSwarmTopologyCrashCleanup(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	swarmLock(t)
	before := swarmState(t)
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	name := "e2e-swtopocrash"
	spec := strings.Replace(fmt.Sprintf(swarmTopologySpec, name, "etcd", 3, "swarm", "overlay", "bind", "overlay"),
		"duration: 2s", "duration: 60s", 1)
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
	services := func() int {
		o, _ := exec.Command("docker", "service", "ls", "-q", "--filter", "label=boxbench.experiment="+exp).Output()
		return len(strings.Fields(string(o)))
	}
	if n, s := nodeCount(exp, "docker"), services(); n != 3 || s != 3 {
		t.Errorf("%d task containers and %d services running while measured, want 3 and 3", n, s)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if s := services(); s != 3 {
		t.Errorf("kill -9 of boxbench left %d services; the test needs all 3 orphaned", s)
	}
	b, err := e.boxbench(ctx, "doctor", "--cleanup").CombinedOutput()
	if err != nil {
		t.Fatalf("doctor --cleanup: %v\n%s", err, b)
	}
	t.Logf("doctor --cleanup:\n%s", b)
	for _, n := range []string{"n1", "n2", "n3"} {
		if !strings.Contains(string(b), "r0001-"+n+"-svc") {
			t.Errorf("doctor --cleanup did not name node %s's service", n)
		}
	}
	if !strings.Contains(string(b), "r0001-net") {
		t.Errorf("doctor --cleanup did not name the cluster's network")
	}
	assertNoFaultLeftovers(t, e.work, exp)
	dockerLeftovers(t, e.work, exp)
	swarmLeftovers(t, name)
	if after := swarmState(t); after != before {
		t.Errorf("swarm %s before, %s after doctor --cleanup", before, after)
	}
}
