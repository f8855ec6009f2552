package kubernetes

import (
	"slices"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// kubeVocab is a vocabulary with the words of p and its section's decoder, as
// builtin.Vocabulary makes it.
func kubeVocab(p *Platform) spec.Vocabulary {
	i := p.Info()
	return spec.Vocabulary{
		DBMSs:     []string{"mariadb", "postgresql", "redis"},
		Baseline:  "native",
		Sections:  map[string]spec.SectionDecoder{SectionKey: p.DecodeSection},
		Workloads: []spec.WorkloadKind{{Name: "ycsb", Measured: true, Records: true, Remote: true, Own: ycsb.Own()}},
		Platforms: map[string]spec.PlatformWords{
			"native": {Storages: []string{"bind"}, Networks: []string{"host"}},
			Name:     {Storages: i.Storages, Networks: i.Networks, Client: i.Client, StorageParams: i.StorageParams},
		},
	}
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

// TestSection: the platform decodes its own section into the Config it is configured with,
// with the spec's client: block; a spec without the section gets the defaults.
func TestSection(t *testing.T) {
	text := strings.Replace(kubeSpec, "exclude:\n", "", 1)
	p := New(nil, nil)
	e, err := spec.Parse([]byte(text), "k.yaml", kubeVocab(p))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.config(); got.Node != "" || got.VolumeSize != 0 {
		t.Errorf("configured by the parse alone: %+v", got)
	}
	d := e.Sections[SectionKey]
	if d.Configure == nil || d.Clusters != nil {
		t.Fatalf("decoded %+v", d)
	}
	d.Configure()
	if c := p.config(); c.Node != "boxbench-node" || !c.ClientInCluster || c.ClientNode != "boxbench-node" || c.VolumeSize != 2<<30 ||
		c.Telemetry != "summary" || c.AgentImage == "" || c.Images["redis"] == "" || c.Namespace != "bench" {
		t.Errorf("configured %+v", c)
	}
	without := text[:strings.Index(text, "kubernetes:\n")] + text[strings.Index(text, "matrix:\n"):]
	if e, err = spec.Parse([]byte(without), "k.yaml", kubeVocab(p)); err != nil {
		t.Fatal(err)
	}
	e.Sections[SectionKey].Configure()
	if c := p.config(); c.Node != "" || c.ClientInCluster {
		t.Errorf("defaults %+v", c)
	}
	// The section's clusters are the cluster key's values, as data (no one asserts its type).
	with := strings.Replace(text, "  telemetry: summary\n", "  telemetry: summary\n  clusters: {b: {context: b}, a: {context: a}}\n", 1)
	if e, err = spec.Parse([]byte(with), "k.yaml", kubeVocab(p)); err != nil {
		t.Fatal(err)
	}
	if got := e.Sections[SectionKey].Clusters; !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("clusters %v, want [a b]", got)
	}
	if got := e.Values("cluster"); !slices.Equal(got, []string{spec.NoCluster, "a", "b"}) {
		t.Errorf("cluster values %v", got)
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
	_, err := spec.Parse([]byte(bad), "k.yaml", kubeVocab(New(nil, nil)))
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
	if _, err := spec.Parse([]byte(bad), "k.yaml", kubeVocab(New(nil, nil))); err == nil || !strings.Contains(err.Error(), `"pvc:Bad/Class" is not valid`) {
		t.Errorf("a StorageClass name that is not a DNS name: %v", err)
	}
}

// TestSectionDecodeProblems: the section's own decoding problems read as the spec's do — the
// line, the dotted field, the closest valid name and every valid one, the value and what was
// expected — all at once, with the validation's problems and the rest of the spec's.
func TestSectionDecodeProblems(t *testing.T) {
	bad := strings.NewReplacer(
		"namespace: bench", "namespce: bench",
		"volumeSize: 2GiB", "volumeSize: 1000000TiB",
		"telemetry: summary", "telemetry: [summary]",
		"threads: 2", "threads: many",
		"exclude:\n", "",
	).Replace(kubeSpec)
	_, err := spec.Parse([]byte(bad), "k.yaml", kubeVocab(New(nil, nil)))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`line 10: kubernetes.namespce: unknown field "namespce" (did you mean "namespace"?); valid here: kubeconfig, context, namespace, node, images, volumeSize, agentImage, telemetry`,
		`line 13: kubernetes.volumeSize: 1000000TiB is out of range (valid: 0 for the default, up to 16TiB)`,
		`line 15: kubernetes.telemetry: a list is given, but a single word or quoted text is expected here`,
		`line 5: "many" is text, but a whole number is expected here (field workload.threads)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	// A key no part of the build knows is refused at the top, naming the platforms' sections.
	_, err = spec.Parse([]byte(strings.NewReplacer("kubernetes:\n", "kubernets:\n", "exclude:\n", "").Replace(kubeSpec)), "k.yaml", kubeVocab(New(nil, nil)))
	if err == nil || !strings.Contains(err.Error(), `line 8: kubernets: unknown field "kubernets" (did you mean "kubernetes"?); valid here:`) {
		t.Errorf("misspelt section: %v", err)
	}
}
