package e2e

import (
	"context"
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

// kubeTopologySpec: a 3-member etcd cluster of hostNetwork pods on the local cluster, with a
// short load phase.
const kubeTopologySpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: %s
dbms: etcd
topology: {nodes: 3}
workload: {type: ycsb, mix: write-heavy, threads: 4, duration: %s, warmup: 1s}
dataset: {records: 200, fieldCount: 4, fieldLength: 50}
limits: {cpus: 0.5, memory: 256MiB}
kubernetes: {kubeconfig: %s}
matrix:
  zip: {platform: [kubernetes], network: [host], storage: [hostpath]}
repetitions: 1
quietStart: {timeout: 1s}
baseline: {platform: kubernetes, network: host}
`

// kubeObjectsOf lists the cluster's labelled objects of experiments named prefix….
func kubeObjectsOf(ctx context.Context, t *testing.T, prefix string) []string {
	t.Helper()
	raw, err := exec.CommandContext(ctx, "/run/boxbench/kube/bin/kubectl", "--kubeconfig", kubeconfig, "get",
		"pods,services,pvc,pv,namespaces", "-A", "-l", "boxbench=1", "-o", "json").Output()
	if err != nil {
		t.Fatalf("list the cluster's labelled objects: %v", err)
	}
	var list struct {
		Items []struct {
			Kind     string
			Metadata struct {
				Name, Namespace string
				Annotations     map[string]string
			}
		}
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range list.Items {
		if strings.HasPrefix(o.Metadata.Annotations["boxbench/experiment"], prefix+"-") {
			out = append(out, o.Kind+" "+o.Metadata.Namespace+"/"+o.Metadata.Name)
		}
	}
	return out
}

// TestKubernetesTopology runs a 3-member etcd cluster as three hostNetwork pods: the run is
// ok, the cluster said all its members were up, every node has its line in the report, and
// nothing of the experiment is left in the cluster.
func TestKubernetesTopology(t *testing.T) {
	needKube(t)
	testenv.NeedCommands(t, "etcd")
	name := "e2e-kubetopo"
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	t.Cleanup(func() { assertNoLeftoversOf(t, e.work, name) })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out := e.runSpec(ctx, t, fmt.Sprintf(kubeTopologySpec, name, "2s", kubeconfig))
	res, b := e.results(ctx, t, out)
	if len(res.Runs) != 1 {
		t.Fatalf("%d runs stored, want 1:\n%s", len(res.Runs), b)
	}
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
	rep, err := e.boxbench(ctx, "report", out).CombinedOutput()
	if err != nil {
		t.Fatalf("report: %v\n%s", err, rep)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if !strings.Contains(string(rep), "node "+n) {
			t.Errorf("the report has no line for node %s:\n%s", n, rep)
		}
	}
	for _, o := range kubeObjectsOf(ctx, t, name) {
		t.Errorf("left in the cluster: %s", o)
	}
}

// TestKubernetesTopologyCrashCleanup kills boxbench (kill -9) while the cluster's pods are
// measured; `doctor --cleanup` then deletes every node's pod and namespace and the work
// directories.
func TestKubernetesTopologyCrashCleanup(t *testing.T) {
	needKube(t)
	testenv.NeedCommands(t, "etcd")
	name := "e2e-kubetopocrash"
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	if err := os.WriteFile(e.specFile, []byte(fmt.Sprintf(kubeTopologySpec, name, "60s", kubeconfig)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd, log := e.start(ctx, t, filepath.Join(e.dir, "out"))
	var exp string
	waitFor(t, cmd, log, 6*time.Minute, "the cluster was never measured", func() bool {
		if m, _ := filepath.Glob(filepath.Join(e.work, "locks", name+"-*.lock")); len(m) > 0 {
			exp = strings.TrimSuffix(filepath.Base(m[0]), ".lock")
		}
		return exp != "" && strings.Contains(lastPhase(log.String()), "msg=warmup+measure ")
	})
	pods := func() int {
		n := 0
		for _, o := range kubeObjectsOf(ctx, t, name) {
			if strings.HasPrefix(o, "Pod ") {
				n++
			}
		}
		return n
	}
	if n := pods(); n != 3 {
		t.Errorf("%d pods while measured, want 3", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if n := pods(); n != 3 {
		t.Errorf("kill -9 of boxbench left %d pods; the test needs all 3 orphaned", n)
	}
	b, err := e.boxbench(ctx, "doctor", "--cleanup").CombinedOutput()
	if err != nil {
		t.Fatalf("doctor --cleanup: %v\n%s", err, b)
	}
	t.Logf("doctor --cleanup:\n%s", b)
	for _, n := range []string{"n1", "n2", "n3"} {
		if !strings.Contains(string(b), "r0001-"+n) {
			t.Errorf("doctor --cleanup did not name node %s", n)
		}
	}
	assertNoFaultLeftovers(t, e.work, exp)
	for _, o := range kubeObjectsOf(ctx, t, name) {
		t.Errorf("left in the cluster: %s", o)
	}
}
