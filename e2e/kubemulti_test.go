package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// The multi-node local cluster's contract (docs/kubernetes.md): the test brings up two named
// instances of its own, one per CNI, at once.
const (
	multiScript = "../scripts/kube-multi.sh"
	// multiNodes: three members and a node of its own for the client.
	multiNodes = "4"
)

// multiInstance is one instance of scripts/kube-multi.sh the test brings up: its name, its
// CNI, and the name the spec's kubernetes.clusters gives it.
type multiInstance struct{ name, cni, cluster string }

func (m multiInstance) kubeconfig() string {
	return "/var/lib/boxbench/multi-" + m.name + "/admin.kubeconfig"
}
func (m multiInstance) kubectl() string    { return "/run/boxbench/multi-" + m.name + "/bin/kubectl" }
func (m multiInstance) state() string      { return "/var/lib/boxbench/multi-" + m.name + "/nodes" }
func (m multiInstance) nodePrefix() string { return "bbmulti-" + m.name + "-" }

var multiInstances = []multiInstance{{"e2er", "routes", "routes"}, {"e2ev", "vxlan", "vxlan"}}

// TestKubernetesMultiNode (issue 30) brings two multi-node local clusters up itself at once, one
// per CNI (routes and vxlan, instances of scripts/kube-multi.sh), and runs one experiment that
// compares them through the matrix key cluster, interleaved: on each, a 3-member etcd cluster on
// the pod network with each member on a Kubernetes node of its own (peers by name through a
// headless Service and cluster DNS) and the client in a pod on the fourth node. Both clusters go
// down on every exit path. Each run is ok, ran on its own cluster (its nodes, its pod network),
// recorded that cluster's name and CNI, says where every member and the client ran, measured a
// sane workload, and left nothing in either cluster.
func TestKubernetesMultiNode(t *testing.T) {
	// Its clusters use the local cluster's Kubernetes build, and come up after that cluster
	// (scripts/kube-local.sh's up and a multi-node cluster's up at once were never tried), with
	// CoreDNS and flannel built by the suite.
	parallel(t, testenv.LocalCluster, testenv.CoreDNS, testenv.Flannel)
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "etcd", "ctr", "go", "nsenter", "unshare")
	testenv.Hold(t, "kube-multi")
	for _, m := range multiInstances {
		if _, err := os.Stat(m.state()); err == nil {
			testenv.Skip(t, "the multi-node cluster instance "+m.name+" is up already (someone's): this test brings its own up and down")
		}
	}
	script := func(ctx context.Context, args ...string) error {
		start := time.Now()
		out, err := exec.CommandContext(ctx, "bash", append([]string{multiScript}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("kube-multi.sh %s: %v\n%s", strings.Join(args, " "), err, tail(out))
		}
		t.Logf("kube-multi.sh %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Second))
		return nil
	}
	// each runs f for every instance at once and returns their errors.
	each := func(f func(m multiInstance) error) error {
		errs := make([]error, len(multiInstances))
		var wg sync.WaitGroup
		for i, m := range multiInstances {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = f(m) }()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	// Down on every exit path, registered before up (down is idempotent), after the leftover
	// check of the env below (cleanups run last in, first out).
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := each(func(m multiInstance) error { return script(ctx, "down", "--name", m.name) }); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if err := each(func(m multiInstance) error {
		return script(ctx, "up", "--name", m.name, "--nodes", multiNodes, "--cni", m.cni)
	}); err != nil {
		t.Fatal(err)
	}

	s := topologySpec("kubemulti", "etcd", "{nodes: 3}",
		"  zip: {platform: [kubernetes, kubernetes], network: [pod, pod], storage: [emptydir, emptydir], cluster: [routes, vxlan]}")
	s.Limits = "{cpus: 0.25, memory: 256MiB}"
	s.Extra = "kubernetes:\n  clusters:\n"
	for _, m := range multiInstances {
		s.Extra += "    " + m.cluster + ": {kubeconfig: " + m.kubeconfig() + "}\n"
	}
	s.Extra += "client: {platform: kubernetes}\nbaseline: {platform: kubernetes, network: pod, storage: emptydir, cluster: routes}\n"
	e := newEnv(t, s)
	e.kubeMulti = multiInstances
	_, res, _ := e.runStored(ctx, t, len(multiInstances))
	seen := map[string]bool{}
	for _, r := range res.Runs {
		for _, m := range multiInstances {
			if strings.Contains(r.ID, "cluster="+m.cluster+"#") {
				seen[m.cluster] = true
				checkMultiRun(t, r, m)
			}
		}
	}
	if len(seen) != len(multiInstances) {
		t.Errorf("runs on clusters %v, want one on each of %v", seen, multiInstances)
	}
	// The node's namespace does not depend on the CNI: once is enough.
	kubeMultiHostNetwork(ctx, t, multiInstances[0])
}

// checkMultiRun checks one run of TestKubernetesMultiNode on instance m.
func checkMultiRun(t *testing.T, r storedRun, m multiInstance) {
	t.Helper()
	if r.Status != "ok" {
		t.Errorf("run %s: %s %s", r.ID, r.Status, r.Reason)
		return
	}
	f := r.Facts
	if f["cluster_members"] != "n1,n2,n3" || f["cluster_leader"] == "" {
		t.Errorf("run %s: members %q leader %q", r.ID, f["cluster_members"], f["cluster_leader"])
	}
	if f["kubernetes_cluster"] != m.cluster || f["kubernetes_cni"] != m.cni || f["kubernetes_kube_proxy_mode"] != "iptables" ||
		!strings.Contains(f["kubernetes_nodes"], m.nodePrefix()+"4=10.250.") {
		t.Errorf("run %s: cluster facts: cluster %q cni %q kube-proxy %q nodes %q, want %s, %s, iptables, %s1..4",
			r.ID, f["kubernetes_cluster"], f["kubernetes_cni"], f["kubernetes_kube_proxy_mode"], f["kubernetes_nodes"], m.cluster, m.cni, m.nodePrefix())
	}
	used := map[string]string{}
	for _, n := range []string{"n1", "n2", "n3"} {
		on := f["node_"+n+"_ran_on"]
		if !strings.HasPrefix(on, "kubernetes node "+m.nodePrefix()) {
			t.Errorf("run %s: member %s ran on %q, not on a node of instance %s", r.ID, n, on, m.name)
		}
		if other, dup := used[on]; dup {
			t.Errorf("run %s: members %s and %s both ran on %s", r.ID, other, n, on)
		}
		used[on] = n
		if p := f["node_"+n+"_network_path"]; !strings.Contains(p, "pod IP 10.245.") {
			t.Errorf("run %s: member %s is not on the pod network: %q", r.ID, n, p)
		}
	}
	site := r.Env["client_site"]
	if !strings.Contains(site, "on node "+m.nodePrefix()) {
		t.Errorf("run %s: client site %q names no node of instance %s", r.ID, site, m.name)
	}
	for on, n := range used {
		if node := strings.Fields(strings.TrimPrefix(on, "kubernetes node "))[0]; strings.Contains(site, "on node "+node+" ") {
			t.Errorf("run %s: the client ran on %s beside member %s, with a node to spare: %q", r.ID, node, n, site)
		}
	}
	for _, w := range r.Warnings {
		if w.Code == "client_shares_node" {
			t.Errorf("run %s: warning %s with %s nodes for 3 members", r.ID, w.Code, multiNodes)
		}
	}
	if r.Throughput == nil || *r.Throughput <= 0 {
		t.Errorf("run %s: throughput %v, want > 0 ops/s", r.ID, r.Throughput)
	} else {
		t.Logf("%s (%s): %.0f ops/s; members %v; client %s", m.cluster, m.cni, *r.Throughput, used, site)
	}
}

// kubeMultiHostNetwork: a hostNetwork box on node 2 of instance m listens in that node's network
// namespace, whose loopback is not this host's (one kernel, so the node "is this host" for
// cgroups and images): the client on this host reaches it at the node's address, never at
// 127.0.0.1.
func kubeMultiHostNetwork(ctx context.Context, t *testing.T, m multiInstance) {
	slot, err := os.ReadFile("/var/lib/boxbench/multi-" + m.name + "/slot")
	if err != nil {
		t.Fatalf("instance %s: its address slot: %v", m.name, err)
	}
	node, addr := m.nodePrefix()+"2", "10.250."+strings.TrimSpace(string(slot))+".12"
	s := spec{Name: "kubemulti-hostnet", DBMS: "etcd", Records: 200, Reps: "1",
		Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: 2s, warmup: 1s}",
		Limits:   "{cpus: 0.25, memory: 256MiB}",
		Matrix:   "  zip: {platform: [kubernetes], network: [host], storage: [emptydir]}",
		Extra: "kubernetes: {kubeconfig: " + m.kubeconfig() + ", node: " + node + "}\n" +
			"baseline: {platform: kubernetes, network: host, storage: emptydir}\n"}
	e := newEnv(t, s)
	e.kubeMulti = []multiInstance{m}
	_, res, _ := e.runStored(ctx, t, 1)
	r := res.Runs[0]
	if r.Status != "ok" {
		t.Fatalf("hostNetwork box on %s: run %s: %s %s", node, r.ID, r.Status, r.Reason)
	}
	if ep := r.Facts["endpoint"]; ep != addr+":2379" {
		t.Errorf("hostNetwork box on %s: endpoint %q, want the node's address %s:2379 (its loopback is the node's namespace, not this host's)", node, ep, addr)
	}
}

// tail is the end of a command's output.
func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
