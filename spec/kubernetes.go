package spec

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Kubernetes says which cluster platform kubernetes uses and how (docs/kubernetes.md).
type Kubernetes struct {
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
	VolumeSize Bytes `yaml:"volumeSize"`
	// AgentImage is an image reference holding boxbench's binary (`boxbench images agent`) for
	// client pods on a node that is not this host.
	AgentImage string `yaml:"agentImage"`
	// Telemetry is where a pod's CPU and memory come from: auto (its cgroup when the node is
	// this host, else the kubelet's summary API) or summary (the summary API everywhere).
	Telemetry string `yaml:"telemetry"`
}

// KubernetesTelemetries are the values of kubernetes.telemetry.
var KubernetesTelemetries = []string{"auto", "summary"}

// Client says where the load generator runs: on this host (default) or in a pod of the cluster
// (platform: kubernetes, on node, default the server's node).
type Client struct {
	Platform string `yaml:"platform"`
	Node     string `yaml:"node"`
}

// ClientPlatforms are the values of client.platform.
var ClientPlatforms = []string{"host", "kubernetes"}

// StorageParams are storage values that take a parameter: "pvc:<StorageClass name>".
var StorageParams = []string{"pvc:"}

var (
	dnsLabelRe     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	dnsSubdomainRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	// imageRefRe: [host[:port]/]path[:tag][@sha256:digest], no spaces or shell characters.
	imageRefRe = regexp.MustCompile(`^[a-z0-9]+([._:/-][a-zA-Z0-9]+)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`)
)

const dnsLabelRule = "a DNS-1123 label: 1-63 lower-case letters, digits or '-', starting and ending with a letter or digit"

// parametric says whether v is a parametric storage value valid has a prefix for ("pvc:fast"
// when valid holds "pvc:"), its parameter a DNS-1123 subdomain (a StorageClass name).
func parametric(valid []string, v string) bool {
	for _, p := range StorageParams {
		if contains(valid, p) && strings.HasPrefix(v, p) && len(v) <= len(p)+63 && dnsSubdomainRe.MatchString(v[len(p):]) {
			return true
		}
	}
	return false
}

// kubernetes checks the kubernetes: and client: blocks.
func (c *checker) kubernetes() {
	k := c.e.Kubernetes
	if k.Kubeconfig != "" && (!filepath.IsAbs(k.Kubeconfig) || !printable(k.Kubeconfig)) {
		c.add("kubernetes.kubeconfig", "%q is not valid (valid: an absolute path)", safeText(k.Kubeconfig))
	}
	if k.Context != "" && (!printable(k.Context) || len(k.Context) > 253) {
		c.add("kubernetes.context", "%q is not valid (valid: a context name of the kubeconfig, printable, at most 253 characters)", safeText(k.Context))
	}
	if k.Namespace != "" && !dnsLabelRe.MatchString(k.Namespace) {
		c.add("kubernetes.namespace", "%q is not valid (valid: %s)", safeText(k.Namespace), dnsLabelRule)
	}
	for f, n := range map[string]string{"kubernetes.node": k.Node, "client.node": c.e.Client.Node} {
		if n != "" && !dnsSubdomainRe.MatchString(n) {
			c.add(f, "%q is not valid (valid: a node name, a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253)", safeText(n))
		}
	}
	for _, d := range SortedKeys(k.Images) {
		if !contains(c.e.vocab.DBMSs, d) {
			c.add("kubernetes.images", "%q is not a dbms (valid: %s)", safeText(d), strings.Join(c.e.vocab.DBMSs, ", "))
		}
		if ref := k.Images[d]; len(ref) > 255 || !imageRefRe.MatchString(ref) {
			c.add("kubernetes.images", "%s: %q is not an image reference (valid: [host[:port]/]name[:tag][@sha256:digest])", safeText(d), safeText(ref))
		}
	}
	if ref := k.AgentImage; ref != "" && (len(ref) > 255 || !imageRefRe.MatchString(ref)) {
		c.add("kubernetes.agentImage", "%q is not an image reference (valid: [host[:port]/]name[:tag][@sha256:digest])", safeText(ref))
	}
	if k.Telemetry != "" {
		c.oneOf("kubernetes.telemetry", k.Telemetry, KubernetesTelemetries)
	}
	if k.VolumeSize < 0 {
		c.add("kubernetes.volumeSize", "%d is not valid (valid: a positive size, e.g. 8GiB)", k.VolumeSize)
	}
	cl := c.e.Client
	if cl.Platform != "" {
		c.oneOf("client.platform", cl.Platform, ClientPlatforms)
	}
	if cl.Node != "" && cl.Platform != "kubernetes" {
		c.add("client.node", "%q applies to client.platform kubernetes only (valid: set platform: kubernetes, or leave node out)", safeText(cl.Node))
	}
	if cl.Platform == "kubernetes" {
		platforms := c.e.ValuesOf("platform")
		if platforms == nil {
			platforms = []string{c.e.DefaultPlatform()}
		}
		switch {
		case !contains(c.e.Values("platform"), "kubernetes"):
			c.add("client.platform", "kubernetes is not a platform of this build (valid: host)")
		case !contains(platforms, "kubernetes"):
			// A client pod needs a kubernetes box: without one the setting would be ignored.
			c.add("client.platform", "kubernetes, but no cell runs on platform kubernetes (valid: host, or add kubernetes to matrix.platform)")
		}
	}
	for _, d := range append(append([]Dim{}, c.e.Matrix.Dims...), c.e.Matrix.Zip...) {
		for _, v := range d.Values {
			if d.Key == "storage" && contains(StorageParams, v) {
				c.put(Problem{Line: d.Line, Field: "matrix.storage",
					Message: fmt.Sprintf("%q needs a StorageClass name (valid: e.g. %sstandard)", v, v)})
			}
		}
	}
}

func printable(s string) bool {
	_, bad := controlRune(s)
	return !bad
}
