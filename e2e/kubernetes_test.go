package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestKubernetes runs experiments on the local cluster, one after another: a single node of 2
// cpus schedules one experiment's pods at a time, so the test holds the cluster
// (platform/kubernetes's tests hold it too); it waits for the cluster before it takes a working slot.
func TestKubernetes(t *testing.T) {
	parallel(t, testenv.LocalCluster)
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "redis-server", "etcd", "ctr")
	if _, err := os.Stat(kubeconfig); err != nil {
		testenv.Skip(t, "no local cluster (scripts/kube-local.sh up): "+err.Error())
	}
	testenv.Hold(t, "kube")
	t.Run("run", kubeRun)
	t.Run("topology", kubeTopology)
	t.Run("topology-crash-cleanup", kubeTopologyCrashCleanup)
}

// kubeEnv is an env of a spec that runs on the local cluster: its leftover check lists the
// cluster's objects too, through the kubernetes platform's own lister, as for every env whose
// spec runs on a platform.
func kubeEnv(t *testing.T, s spec) *env { return newEnv(t, s) }

// kubeSpec: Redis in pods on the local cluster (hostPath over hostNetwork, emptyDir through a
// ClusterIP service) beside the native baseline; kube is more of the kubernetes map, client
// where the client runs.
func kubeSpec(name, duration, kube, client string) spec {
	return spec{Name: name, Records: 500, Reps: "1",
		Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: " + duration + ", warmup: 1s}",
		Matrix: `  zip:
    platform: [native, kubernetes, kubernetes]
    storage:  [bind,   hostpath,   emptydir]
    network:  [host,   host,       service]`,
		Extra: "kubernetes: {kubeconfig: " + kubeconfig + kube + "}\n" + client +
			"baseline: {platform: native, storage: bind, network: host}\n"}
}

// kubeRun runs a short Redis workload against pods on the local cluster beside the
// native baseline, with the client on this host (host), in a pod on the node (client: {platform:
// kubernetes}), or in a pod of the agent image `boxbench images agent` built (what a node that
// is not this host needs), with the server's telemetry from the kubelet's summary API (what
// such a node offers) instead of the cgroup: every run is ok, records its node, path and where
// its client ran, and nothing labelled with the experiment is left in the cluster.
func kubeRun(t *testing.T) {
	for _, c := range []struct{ name, duration, kube, client string }{
		{"host", "2s", "", ""},
		{"pod", "2s", "", "client: {platform: kubernetes}\n"},
		{"agent", "15s", ", agentImage: %s, telemetry: summary", "client: {platform: kubernetes}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := kubeEnv(t, spec{})
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			ref := ""
			if c.name == "agent" {
				out, err := exec.CommandContext(ctx, bin, "images", "agent").CombinedOutput()
				if err != nil {
					t.Fatalf("boxbench images agent: %v\n%s", err, out)
				}
				ref, _, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
				// The image is this test binary's build: nobody else runs it.
				t.Cleanup(func() { _ = exec.Command("docker", "rmi", ref).Run() })
				c.kube = strings.Replace(c.kube, "%s", ref, 1)
			}
			e.setSpec(t, kubeSpec("kube-"+c.name, c.duration, c.kube, c.client))
			out, got, _ := e.runStored(ctx, t, 3)
			kube := 0
			for _, r := range got.Runs {
				if r.Status != "ok" {
					t.Errorf("run %s: %s %s", r.ID, r.Status, r.Reason)
				}
				if r.Facts["platform"] != "kubernetes" {
					continue
				}
				kube++
				if r.Facts["node"] != "boxbench-node" || r.Facts["node_is_this_host"] != "true" || r.Facts["network_path"] == "" || (r.Facts["cgroup"] == "" && ref == "") {
					t.Errorf("run %s facts: node %q local %q path %q cgroup %q", r.ID, r.Facts["node"], r.Facts["node_is_this_host"], r.Facts["network_path"], r.Facts["cgroup"])
				}
				if c.client != "" && !strings.Contains(r.Env["client_site"]+r.Facts["client_site"], "pod") {
					t.Errorf("run %s: client_site %q / %q does not say the client ran in a pod", r.ID, r.Env["client_site"], r.Facts["client_site"])
				}
				if ref == "" {
					continue
				}
				if !strings.Contains(r.Env["client_site"], ref) || r.Facts["client_build"] == "" {
					t.Errorf("run %s: client_site %q, client_build %q: not the agent image %s", r.ID, r.Env["client_site"], r.Facts["client_build"], ref)
				}
				if !strings.HasPrefix(r.Facts["server_telemetry"], "kubelet summary API") {
					t.Errorf("run %s: server_telemetry %q", r.ID, r.Facts["server_telemetry"])
				}
				series, err := e.boxbench(ctx, "results", out, "--run", r.ID, "--series").Output()
				if err != nil || !strings.Contains(string(series), "db.memory_working_set_bytes") || !strings.Contains(string(series), "db.stats_age_seconds") {
					t.Errorf("run %s: no server memory from the kubelet's summary: %v\n%.2000s", r.ID, err, series)
				}
			}
			if kube != 2 {
				t.Errorf("%d kubernetes runs, want 2", kube)
			}
		})
	}
}

// kubeTopologySpec: a 3-member etcd cluster of hostNetwork pods on the local cluster, with a
// short load phase.
func kubeTopologySpec(name, duration string) spec {
	s := topologySpec(name, "etcd", "{nodes: 3}", "  zip: {platform: [kubernetes], network: [host], storage: [hostpath]}")
	s.Workload = strings.Replace(s.Workload, "duration: 2s", "duration: "+duration, 1)
	s.Extra = "kubernetes: {kubeconfig: " + kubeconfig + "}\nbaseline: {platform: kubernetes, network: host}\n"
	return s
}

// kubeTopology runs a 3-member etcd cluster as three hostNetwork pods: the run is
// ok, the cluster said all its members were up on the host network, every node has its line in
// the report, and nothing of the experiment is left in the cluster.
func kubeTopology(t *testing.T) {
	e := kubeEnv(t, kubeTopologySpec("kubetopo", "2s"))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out, res, _ := e.runStored(ctx, t, 1)
	r := res.Runs[0]
	if r.Status != "ok" {
		t.Fatalf("run %s: %s %s", r.ID, r.Status, r.Reason)
	}
	f := r.Facts
	if f["topology_nodes"] != "3" || f["cluster_members"] != "n1,n2,n3" || f["cluster_leader"] == "" {
		t.Errorf("run %s: nodes %q members %q leader %q", r.ID, f["topology_nodes"], f["cluster_members"], f["cluster_leader"])
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if !strings.HasPrefix(f["node_"+n+"_endpoint"], "127.0.0.1:") && !strings.Contains(f["topology_endpoints"], n+"=127.0.0.1:") {
			t.Errorf("run %s: node %s is not on the host network: %q", r.ID, n, f["topology_endpoints"])
		}
	}
	assertNodeLines(t, e.report(ctx, t, out, ""), 3)
}

// kubeTopologyCrashCleanup kills boxbench (kill -9) while the cluster's pods are
// measured; `doctor --cleanup` then deletes every node's pod and namespace and the work
// directories.
func kubeTopologyCrashCleanup(t *testing.T) {
	e := kubeEnv(t, kubeTopologySpec("kubetopocrash", "60s"))
	crashCluster(t, e, 6*time.Minute, func(exp string) int {
		n := 0
		for _, o := range kubeObjects(exp) {
			if strings.HasPrefix(o, "Pod ") {
				n++
			}
		}
		return n
	}, "r0001-n1", "r0001-n2", "r0001-n3")
}
