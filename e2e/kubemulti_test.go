package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/testenv"
)

// The multi-node local cluster's contract (docs/kubernetes.md).
const (
	multiScript     = "../scripts/kube-multi.sh"
	multiKubeconfig = "/var/lib/boxbench/multi/admin.kubeconfig"
	multiKubectl    = "/run/boxbench/multi/bin/kubectl"
	multiState      = "/var/lib/boxbench/multi/nodes" // exists while the cluster is up
	// multiNodes: three members and a node of its own for the client.
	multiNodes = "4"
)

// TestKubernetesMultiNode (issue 30) brings the multi-node local cluster up itself under each
// CNI, runs a 3-member etcd cluster on the pod network with each member on a Kubernetes node of
// its own (peers by name through a headless Service and cluster DNS) and the client in a pod on
// the fourth node, and takes the cluster down on every exit path. Each run is ok, says where
// every member and the client ran, measured a sane workload, and left nothing in the cluster.
func TestKubernetesMultiNode(t *testing.T) {
	t.Parallel()
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "etcd", "ctr", "go", "nsenter", "unshare")
	testenv.Hold(t, "kube-multi")
	if _, err := os.Stat(multiState); err == nil {
		testenv.Skip(t, "the multi-node local cluster is up already (someone's): this test brings its own up and down")
	}
	for _, cni := range []string{"routes", "vxlan"} {
		t.Run(cni, func(t *testing.T) { kubeMulti(t, cni) })
	}
}

func kubeMulti(t *testing.T, cni string) {
	script := func(ctx context.Context, args ...string) {
		t.Helper()
		start := time.Now()
		out, err := exec.CommandContext(ctx, "bash", append([]string{multiScript}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kube-multi.sh %s: %v\n%s", strings.Join(args, " "), err, tail(out))
		}
		t.Logf("kube-multi.sh %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Second))
	}
	// Down on every exit path, registered before up (down is idempotent), after the leftover
	// check of the env below (cleanups run last in, first out).
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		script(ctx, "down")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	script(ctx, "up", "--nodes", multiNodes, "--cni", cni)

	s := topologySpec("kubemulti-"+cni, "etcd", "{nodes: 3}", "  zip: {platform: [kubernetes], network: [pod], storage: [emptydir]}")
	s.Limits = "{cpus: 0.25, memory: 256MiB}"
	s.Extra = "kubernetes: {kubeconfig: " + multiKubeconfig + "}\nclient: {platform: kubernetes}\n" +
		"baseline: {platform: kubernetes, network: pod, storage: emptydir}\n"
	e := newEnv(t, s)
	e.kubeMulti = true
	_, res, _ := e.runStored(ctx, t, 1)
	r := res.Runs[0]
	if r.Status != "ok" {
		t.Fatalf("run %s: %s %s", r.ID, r.Status, r.Reason)
	}
	f := r.Facts
	if f["cluster_members"] != "n1,n2,n3" || f["cluster_leader"] == "" {
		t.Errorf("members %q leader %q", f["cluster_members"], f["cluster_leader"])
	}
	if f["kubernetes_cni"] != cni || f["kubernetes_kube_proxy_mode"] != "iptables" || !strings.Contains(f["kubernetes_nodes"], "bbmulti-4=10.250.0.14") {
		t.Errorf("cluster facts: cni %q kube-proxy %q nodes %q", f["kubernetes_cni"], f["kubernetes_kube_proxy_mode"], f["kubernetes_nodes"])
	}
	used := map[string]string{}
	for _, n := range []string{"n1", "n2", "n3"} {
		on := f["node_"+n+"_ran_on"]
		if !strings.HasPrefix(on, "kubernetes node bbmulti-") {
			t.Errorf("member %s ran on %q", n, on)
		}
		if other, dup := used[on]; dup {
			t.Errorf("members %s and %s both ran on %s", other, n, on)
		}
		used[on] = n
		if p := f["node_"+n+"_network_path"]; !strings.Contains(p, "pod IP 10.245.") {
			t.Errorf("member %s is not on the pod network: %q", n, p)
		}
	}
	site := r.Env["client_site"]
	if !strings.Contains(site, "on node bbmulti-") {
		t.Errorf("client site %q names no node", site)
	}
	for on, n := range used {
		if node := strings.Fields(strings.TrimPrefix(on, "kubernetes node "))[0]; strings.Contains(site, "on node "+node+" ") {
			t.Errorf("the client ran on %s beside member %s, with a node to spare: %q", node, n, site)
		}
	}
	for _, w := range r.Warnings {
		if w.Code == "client_shares_node" {
			t.Errorf("warning %s with %s nodes for 3 members", w.Code, multiNodes)
		}
	}
	if r.Throughput == nil || *r.Throughput <= 0 {
		t.Errorf("throughput %v, want > 0 ops/s", r.Throughput)
	} else {
		t.Logf("%s: %.0f ops/s; members %v; client %s", cni, *r.Throughput, used, site)
	}
	if cni == "routes" { // the node's namespace does not depend on the CNI: once is enough
		kubeMultiHostNetwork(ctx, t)
	}
}

// kubeMultiHostNetwork: a hostNetwork box on node 2 listens in that node's network namespace,
// whose loopback is not this host's (one kernel, so the node "is this host" for cgroups and
// images): the client on this host reaches it at the node's address, never at 127.0.0.1.
func kubeMultiHostNetwork(ctx context.Context, t *testing.T) {
	s := spec{Name: "kubemulti-hostnet", DBMS: "etcd", Records: 200, Reps: "1",
		Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: 2s, warmup: 1s}",
		Limits:   "{cpus: 0.25, memory: 256MiB}",
		Matrix:   "  zip: {platform: [kubernetes], network: [host], storage: [emptydir]}",
		Extra: "kubernetes: {kubeconfig: " + multiKubeconfig + ", node: bbmulti-2}\n" +
			"baseline: {platform: kubernetes, network: host, storage: emptydir}\n"}
	e := newEnv(t, s)
	e.kubeMulti = true
	_, res, _ := e.runStored(ctx, t, 1)
	r := res.Runs[0]
	if r.Status != "ok" {
		t.Fatalf("hostNetwork box on bbmulti-2: run %s: %s %s", r.ID, r.Status, r.Reason)
	}
	if ep := r.Facts["endpoint"]; ep != "10.250.0.12:2379" {
		t.Errorf("hostNetwork box on bbmulti-2: endpoint %q, want the node's address 10.250.0.12:2379 (its loopback is the node's namespace, not this host's)", ep)
	}
}

// tail is the end of a command's output.
func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
