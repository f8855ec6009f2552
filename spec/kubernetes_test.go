package spec

import (
	"strings"
	"testing"
)

var kubeVocab = Vocabulary{
	DBMSs:    []string{"mariadb", "postgresql", "redis"},
	Baseline: "native",
	Platforms: map[string]PlatformWords{
		"native": {Storages: []string{"bind"}, Networks: []string{"host"}},
		"kubernetes": {Storages: []string{"hostpath", "localpv", "emptydir", "tmpfs", "pvc:"},
			Networks: []string{"host", "pod", "service", "nodeport"}},
	},
}

const kubeSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: k
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: 5s}
dataset: {records: 100}
limits: {cpus: 1, memory: 512MiB}
kubernetes:
  kubeconfig: /var/lib/boxbench/kube/admin.kubeconfig
  namespace: bench
  node: boxbench-node
  images: {redis: "registry.example:5000/boxbench/redis:7.0"}
  volumeSize: 2GiB
  agentImage: "registry.example:5000/boxbench/agent:dev"
  telemetry: summary
client: {platform: kubernetes, node: boxbench-node}
matrix:
  platform: [native, kubernetes]
  storage: [hostpath, pvc:standard]
  network: [host, service]
exclude:
repetitions: 1
`

func TestKubernetesBlock(t *testing.T) {
	text := strings.Replace(kubeSpec, "exclude:\n", "", 1)
	e, err := Parse([]byte(text), "k.yaml", kubeVocab)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kubernetes.Node != "boxbench-node" || e.Client.Platform != "kubernetes" || e.Kubernetes.VolumeSize != 2<<30 ||
		e.Kubernetes.Telemetry != "summary" || e.Kubernetes.AgentImage == "" {
		t.Errorf("parsed %+v %+v", e.Kubernetes, e.Client)
	}
}

func TestKubernetesProblems(t *testing.T) {
	bad := strings.NewReplacer(
		"kubeconfig: /var/lib/boxbench/kube/admin.kubeconfig", "kubeconfig: relative/kubeconfig",
		"namespace: bench", "namespace: Bench_1",
		"node: boxbench-node\n  images", "node: 'a b'\n  images",
		`redis: "registry.example:5000/boxbench/redis:7.0"`, `redis: "x; rm -rf /", mongodb: "mongo:7"`,
		"client: {platform: kubernetes, node: boxbench-node}", "client: {platform: swarm, node: n1}",
		"pvc:standard", "pvc:",
		`agentImage: "registry.example:5000/boxbench/agent:dev"`, "agentImage: '$(id)'",
		"telemetry: summary", "telemetry: prometheus",
		"exclude:\n", "",
	).Replace(kubeSpec)
	_, err := Parse([]byte(bad), "k.yaml", kubeVocab)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"kubernetes.kubeconfig", "relative/kubeconfig", "kubernetes.namespace", "Bench_1",
		"kubernetes.node", `"a b"`, `"x; rm -rf /" is not an image reference`, `"mongodb" is not a dbms`,
		"client.platform", "client.node", `"pvc:" needs a StorageClass name`,
		`kubernetes.agentImage: "$(id)" is not an image reference`, "kubernetes.telemetry", "prometheus"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	bad = strings.NewReplacer("pvc:standard", "pvc:Bad/Class", "exclude:\n", "").Replace(kubeSpec)
	if _, err := Parse([]byte(bad), "k.yaml", kubeVocab); err == nil || !strings.Contains(err.Error(), `"pvc:Bad/Class" is not valid`) {
		t.Errorf("a StorageClass name that is not a DNS name: %v", err)
	}
}
