package kubernetes

import (
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/spec/section"
)

// SectionKey is the spec's key of this platform's section (platform.Settings).
const SectionKey = "kubernetes"

// Section is the spec's kubernetes: block: which cluster the platform uses and how
// (docs/kubernetes.md). The platform decodes and validates it itself (DecodeSection).
type Section struct {
	// Kubeconfig is the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the local
	// cluster's /var/lib/boxbench/kube/admin.kubeconfig); Context one of its contexts.
	Kubeconfig string `yaml:"kubeconfig"`
	Context    string `yaml:"context"`
	// Namespace the boxes go in (it must exist); default: a namespace per box, made and deleted
	// by boxbench.
	Namespace string `yaml:"namespace"`
	// Node the server pod is pinned to; default: the only node, or the node that is this host.
	Node string `yaml:"node"`
	// Images are image references by dbms, for a node that is not this host (boxbench loads
	// its own image into a local node).
	Images map[string]string `yaml:"images"`
	// VolumeSize is the size of a pvc:<class> claim and of a local PersistentVolume.
	VolumeSize spec.Bytes `yaml:"volumeSize"`
	// AgentImage is an image reference holding boxbench's binary (`boxbench images agent`) for
	// client pods on a node that is not this host.
	AgentImage string `yaml:"agentImage"`
	// Telemetry is where a pod's CPU and memory come from: auto (its cgroup when the node is
	// this host, else the kubelet's summary API) or summary (the summary API everywhere).
	Telemetry string `yaml:"telemetry"`
	// Clusters name the clusters the matrix key cluster chooses between, each a kubeconfig and
	// a context (the same rules as kubeconfig and context above).
	Clusters map[string]ClusterRef `yaml:"clusters"`
}

var (
	dnsLabelRe     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	dnsSubdomainRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	// imageRefRe: [host[:port]/]path[:tag][@sha256:digest], no spaces or shell characters.
	imageRefRe = regexp.MustCompile(`^[a-z0-9]+([._:/-][a-zA-Z0-9]+)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`)
)

// clusterNameRe: a cluster's name reaches cell ids, result paths and the report.
var clusterNameRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$`)

// checkRef checks a kubeconfig and context at field path at.
func checkRef(c *section.Checker, at string, r ClusterRef) {
	if r.Kubeconfig != "" && (!filepath.IsAbs(r.Kubeconfig) || !section.Printable(r.Kubeconfig)) {
		c.Add(at+".kubeconfig", "%q is not valid (valid: an absolute path)", section.SafeText(r.Kubeconfig))
	}
	if r.Context != "" && (!section.Printable(r.Context) || len(r.Context) > 253) {
		c.Add(at+".context", "%q is not valid (valid: a context name of the kubeconfig, printable, at most 253 characters)", section.SafeText(r.Context))
	}
}

const dnsLabelRule = "a DNS-1123 label: 1-63 lower-case letters, digits or '-', starting and ending with a letter or digit"

// SectionKey: platform.Settings.
func (p *Platform) SectionKey() string { return SectionKey }

// DecodeSection decodes and checks the kubernetes: block (n nil: the defaults) into the Config
// its Configure configures the platform with, with the spec's client: block (a client pod, its
// node); the cluster key's values are kubernetes.clusters.
func (p *Platform) DecodeSection(n *yaml.Node, c section.Context) (section.Decoded, []section.Problem) {
	var s Section
	ps := section.Decode(n, SectionKey, &s)
	ps = append(ps, s.check(section.NewChecker(n, SectionKey), c)...)
	cfg := Config{Kubeconfig: s.Kubeconfig, Context: s.Context, Namespace: s.Namespace, Node: s.Node,
		Images: s.Images, VolumeSize: int64(s.VolumeSize), ClientInCluster: c.ClientPlatform == Name,
		ClientNode: c.ClientNode, AgentImage: s.AgentImage, Telemetry: s.Telemetry, Clusters: s.Clusters}
	return section.Decoded{Clusters: cfg.ClusterNames(), Configure: func() { p.Configure(cfg) }}, ps
}

// check validates a decoded section, every problem at once.
func (s Section) check(c *section.Checker, ctx section.Context) []section.Problem {
	checkRef(c, "kubernetes", ClusterRef{Kubeconfig: s.Kubeconfig, Context: s.Context})
	for _, name := range slices.Sorted(maps.Keys(s.Clusters)) {
		if !clusterNameRe.MatchString(name) || name == spec.NoCluster {
			c.Add("kubernetes.clusters", "%q is not a valid cluster name (valid: 1-32 lower-case letters, digits or '-', starting and ending with a letter or digit, not %q)", section.SafeText(name), spec.NoCluster)
			continue
		}
		checkRef(c, "kubernetes.clusters."+name, s.Clusters[name])
	}
	if s.Namespace != "" && !dnsLabelRe.MatchString(s.Namespace) {
		c.Add("kubernetes.namespace", "%q is not valid (valid: %s)", section.SafeText(s.Namespace), dnsLabelRule)
	}
	if s.Node != "" && !dnsSubdomainRe.MatchString(s.Node) {
		c.Add("kubernetes.node", "%q is not valid (valid: a node name, a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253)", section.SafeText(s.Node))
	}
	for _, d := range spec.SortedKeys(s.Images) {
		if !slices.Contains(ctx.DBMSs, d) {
			c.Add("kubernetes.images", "%q is not a dbms (valid: %s)", section.SafeText(d), strings.Join(ctx.DBMSs, ", "))
		}
		if ref := s.Images[d]; len(ref) > 255 || !imageRefRe.MatchString(ref) {
			c.Add("kubernetes.images", "%s: %q is not an image reference (valid: [host[:port]/]name[:tag][@sha256:digest])", section.SafeText(d), section.SafeText(ref))
		}
	}
	if ref := s.AgentImage; ref != "" && (len(ref) > 255 || !imageRefRe.MatchString(ref)) {
		c.Add("kubernetes.agentImage", "%q is not an image reference (valid: [host[:port]/]name[:tag][@sha256:digest])", section.SafeText(ref))
	}
	if s.Telemetry != "" {
		c.OneOf("kubernetes.telemetry", s.Telemetry, Telemetries)
	}
	if s.VolumeSize < 0 {
		c.Add("kubernetes.volumeSize", "%d is not valid (valid: a positive size, e.g. 8GiB)", s.VolumeSize)
	}
	if s.VolumeSize < 0 || s.VolumeSize > spec.MaxBytes { // the bound of every size in a spec
		c.Add("kubernetes.volumeSize", "%s is out of range (valid: 0 for the default, up to %s)", spec.FormatBytes(int64(s.VolumeSize)), spec.FormatBytes(spec.MaxBytes))
	}
	return c.Problems
}
