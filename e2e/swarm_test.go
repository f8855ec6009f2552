package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestSwarm runs experiments on the engine's swarm, one after another: it holds the swarm
// (platform/swarm's tests make and leave swarms too) and takes one of the package's parallel
// slots; after each experiment the swarm must be as it was before.
func TestSwarm(t *testing.T) {
	parallel(t)
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "redis-server", "etcd")
	testenv.Hold(t, "swarm")
	for _, c := range []struct {
		name string
		f    func(t *testing.T)
	}{{"services", swarmServices}, {"topology", swarmTopology}, {"topology-crash-cleanup", swarmTopologyCrashCleanup}} {
		t.Run(c.name, func(t *testing.T) {
			before := swarmState(t)
			t.Cleanup(func() {
				if after := swarmState(t); after != before {
					t.Errorf("swarm %s before the test, %s after; what the engine holds now:\n%s", before, after, swarmHolds())
				}
			})
			c.f(t)
		})
	}
}

// swarmState is the engine's swarm state as docker info prints it ("inactive", "active").
func swarmState(t *testing.T) string {
	out, err := exec.Command("docker", "info", "--format", "{{.Swarm.LocalNodeState}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// swarmHolds lists what keeps a swarm that boxbench's release would keep it for: services,
// overlay networks, and running containers with their networks (a user-defined bridge's
// containers keep it too, moby/moby#45144).
func swarmHolds() string {
	var b strings.Builder
	for _, argv := range [][]string{
		{"service", "ls", "--format", "service {{.Name}} {{.Replicas}}"},
		{"network", "ls", "--filter", "driver=overlay", "--format", "overlay network {{.Name}} {{.Labels}}"},
		{"ps", "--format", "container {{.Names}} on {{.Networks}}"},
	} {
		out, err := exec.Command("docker", argv...).CombinedOutput()
		if err != nil {
			fmt.Fprintf(&b, "docker %s: %v\n", strings.Join(argv[:2], " "), err)
		}
		b.Write(out)
	}
	return b.String()
}

// swarmServices runs Redis natively and as Swarm services on the host network and on an overlay
// network, whose client runs in a container on the overlay (boxbench agent, the binary itself
// bind-mounted): every run is ok, the overlay run records where its client ran, the vip cell
// either runs or is skipped with the kernel's reason, no service or network is left, and the
// swarm is as it was before.
func swarmServices(t *testing.T) {
	e := newEnv(t, spec{Name: "swarm", Records: 2000, Reps: "1", Matrix: `  zip:
    platform: [native, swarm, swarm,   swarm]
    storage:  [bind,   bind,  volume,  bind]
    network:  [host,   host,  overlay, vip]`,
		Extra: "baseline: {platform: native, storage: bind, network: host}\n" + swarmAccept})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, _ := e.run(ctx, t)
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
}

// swarmTopology runs a 3-member etcd cluster (swarm host and overlay) and a Redis primary
// with a replica (overlay) as one Swarm service per node: every run ok, the cluster said all
// its members were up, the overlay runs' client ran in a container on the cluster's network and
// knew every etcd member there, the report has every node, and neither a service nor a network
// is left, the swarm as it was.
func swarmTopology(t *testing.T) {
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
			e := newEnv(t, swarmTopologySpec("swtopo-"+c.dbms, c.dbms, c.nodes, c.platforms, c.nets, c.storages))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			out, res, _ := e.runStored(ctx, t, strings.Count(c.platforms, ",")+1)
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
					etcdUp(t, r)
					if overlay && strings.Count(f["client_endpoints"], ":2379") != 3 {
						t.Errorf("run %s: the client at the site does not know every member: %q", r.ID, f["client_endpoints"])
					}
				default:
					if f["cluster_replicas_online"] != "1" {
						t.Errorf("run %s: redis replicas online %q", r.ID, f["cluster_replicas_online"])
					}
				}
			}
			assertNodeLines(t, e.report(ctx, t, out, ""), c.nodes)
		})
	}
}

// swarmTopologySpec: a cluster as Swarm services, one per node, with a short load phase.
func swarmTopologySpec(name, dbms string, nodes int, platforms, nets, storages string) spec {
	s := topologySpec(name, dbms, fmt.Sprintf("{nodes: %d}", nodes),
		fmt.Sprintf("  zip: {platform: [%s], network: [%s], storage: [%s]}", platforms, nets, storages))
	// The first cell is every cell's baseline: its network and its storage (a baseline that
	// named only the network gave the volume cell one the zip does not form, which plan refuses).
	s.Extra = "baseline: {platform: swarm, network: " + strings.Split(nets, ",")[0] + ", storage: " + strings.Split(storages, ",")[0] + "}\n" + swarmAccept
	return s
}

// swarmAccept lets the tests init and leave the engine's swarm beside containers on bridge
// networks (platform/swarm's guard): the suite keeps its bridge-network clusters apart from
// swarm tests with the swarm lock (testenv.HoldShared).
const swarmAccept = "swarm: {acceptBridgeDNSLoss: true}\n"

// swarmTopologyCrashCleanup kills boxbench (kill -9) while a 3-member etcd cluster of
// Swarm services on a cluster overlay network is measured; `doctor --cleanup` then removes
// every node's service and task container, the cluster's network and the work directories,
// and leaves the swarm boxbench made.
func swarmTopologyCrashCleanup(t *testing.T) {
	s := swarmTopologySpec("swtopocrash", "etcd", 3, "swarm", "overlay", "bind")
	s.Workload = strings.Replace(s.Workload, "duration: 2s", "duration: 60s", 1)
	e := newEnv(t, s)
	services := func(exp string) int {
		o, _ := exec.Command("docker", "service", "ls", "-q", "--filter", "label=boxbench.experiment="+exp).Output()
		return len(strings.Fields(string(o)))
	}
	crashCluster(t, e, 3*time.Minute, func(exp string) int {
		if n := e.dockerContainers(exp, "", false); n != services(exp) {
			t.Errorf("%d task containers, %d services", n, services(exp))
		}
		return services(exp)
	}, "r0001-n1-svc", "r0001-n2-svc", "r0001-n3-svc", "r0001-net")
}
