package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/testenv"
)

// kubeconfig is the local cluster's (scripts/kube-local.sh's contract).
const kubeconfig = "/var/lib/boxbench/kube/admin.kubeconfig"

const kubeSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: %s
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: %s, warmup: 1s}
dataset: {records: 500, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 512MiB}
kubernetes: {kubeconfig: %s%s}
%s
matrix:
  zip:
    platform: [native, kubernetes, kubernetes]
    storage:  [bind,   hostpath,   emptydir]
    network:  [host,   host,       service]
repetitions: 1
baseline: {platform: native, storage: bind, network: host}
`

// needKube requires root, Docker (the image), Redis natively and the local cluster.
func needKube(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "redis-server", "ctr")
	if _, err := os.Stat(kubeconfig); err != nil {
		testenv.Skip(t, "no local cluster (scripts/kube-local.sh up): "+err.Error())
	}
}

// TestKubernetesRun runs a short Redis workload against pods on the local cluster (hostPath
// over hostNetwork, emptyDir through a ClusterIP service) beside the native baseline, with the
// client on this host: every run is ok, records its node and path, and nothing labelled with
// the experiment is left in the cluster.
func TestKubernetesRun(t *testing.T) {
	needKube(t)
	_, _, _ = runKube(t, "e2e-kube-host", "2s", "", "")
}

// TestKubernetesClientPod: the same with the load generator in a pod on the node
// (client: {platform: kubernetes}); the run records where the client ran.
func TestKubernetesClientPod(t *testing.T) {
	needKube(t)
	_, _, _ = runKube(t, "e2e-kube-pod", "2s", "", "client: {platform: kubernetes}")
}

// TestKubernetesAgentImage: the client pod runs the agent image `boxbench images agent` built
// (what a node that is not this host needs), and the server's telemetry comes from the
// kubelet's summary API (what such a node offers) instead of the cgroup.
func TestKubernetesAgentImage(t *testing.T) {
	needKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "images", "agent").CombinedOutput()
	if err != nil {
		t.Fatalf("boxbench images agent: %v\n%s", err, out)
	}
	ref, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	// The image is this test binary's build: nobody else runs it.
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", ref).Run() })
	e, results, runs := runKube(t, "e2e-kube-agent", "15s", ", agentImage: "+ref+", telemetry: summary", "client: {platform: kubernetes}")
	for _, r := range runs {
		if r.Facts["platform"] != "kubernetes" {
			continue
		}
		if !strings.Contains(r.Env["client_site"], ref) || r.Facts["client_build"] == "" {
			t.Errorf("run %s: client_site %q, client_build %q: not the agent image %s", r.ID, r.Env["client_site"], r.Facts["client_build"], ref)
		}
		if !strings.HasPrefix(r.Facts["server_telemetry"], "kubelet summary API") {
			t.Errorf("run %s: server_telemetry %q", r.ID, r.Facts["server_telemetry"])
		}
		series, err := e.boxbench(ctx, "results", results, "--run", r.ID, "--series").Output()
		if err != nil || !strings.Contains(string(series), "db.memory_working_set_bytes") || !strings.Contains(string(series), "db.stats_age_seconds") {
			t.Errorf("run %s: no server memory from the kubelet's summary: %v\n%.2000s", r.ID, err, series)
		}
	}
}

func runKube(t *testing.T, name, duration, kubeExtra, client string) (env, string, []storedRun) {
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	t.Cleanup(func() { assertNoLeftovers(t, e.work) })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out := e.runSpec(ctx, t, fmt.Sprintf(kubeSpec, name, duration, kubeconfig, kubeExtra, client))
	got, b := e.results(ctx, t, out)
	if len(got.Runs) != 3 {
		t.Fatalf("%d runs stored, want 3: %s", len(got.Runs), b)
	}
	kube := 0
	for _, r := range got.Runs {
		if r.Status != "ok" {
			t.Errorf("run %s: %s %s", r.ID, r.Status, r.Reason)
		}
		if r.Facts["platform"] != "kubernetes" {
			continue
		}
		kube++
		if r.Facts["node"] != "boxbench-node" || r.Facts["node_is_this_host"] != "true" || r.Facts["network_path"] == "" || (r.Facts["cgroup"] == "" && kubeExtra == "") {
			t.Errorf("run %s facts: node %q local %q path %q cgroup %q", r.ID, r.Facts["node"], r.Facts["node_is_this_host"], r.Facts["network_path"], r.Facts["cgroup"])
		}
		if client != "" && !strings.Contains(r.Env["client_site"]+r.Facts["client_site"], "pod") {
			t.Errorf("run %s: client_site %q / %q does not say the client ran in a pod", r.ID, r.Env["client_site"], r.Facts["client_site"])
		}
	}
	if kube != 2 {
		t.Errorf("%d kubernetes runs, want 2", kube)
	}
	// Nothing of the experiment is left in the cluster (only this test's experiment: other
	// tests may use the cluster at the same time).
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
	for _, o := range list.Items {
		if strings.HasPrefix(o.Metadata.Annotations["boxbench/experiment"], name+"-") {
			t.Errorf("left in the cluster: %s %s/%s", o.Kind, o.Metadata.Namespace, o.Metadata.Name)
		}
	}
	return e, out, got.Runs
}
