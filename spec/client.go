package spec

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

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

// dnsSubdomainRe: a DNS-1123 subdomain (a node's or a StorageClass's name).
var dnsSubdomainRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

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

// SectionDecoder decodes and validates a top-level section that a platform owns
// (platform.Settings): n is the section's node, nil when the spec leaves it out; the value is
// what the platform is then configured with (Experiment.Sections), the problems every one
// found (section.Decode and section.Checker give them lines and field paths).
type SectionDecoder func(n *yaml.Node, c section.Context) (any, []Problem)

// ClusterNamer is a decoded section that names clusters (kubernetes.clusters): the values of the
// matrix key cluster besides NoCluster.
type ClusterNamer interface{ ClusterNames() []string }

// NoCluster is the cluster key's value for a cell on no named cluster (the platform's default).
const NoCluster = "none"

// clusterNames are the values the matrix key cluster may take.
func (e *Experiment) clusterNames() []string {
	out := []string{NoCluster}
	for _, k := range sortedKeys(e.Sections) {
		if n, ok := e.Sections[k].(ClusterNamer); ok {
			out = append(out, n.ClusterNames()...)
		}
	}
	return out
}

// decodeSections hands every platform's section to its decoder (an absent one as nil, for
// its defaults) and refuses the top-level keys that neither spec nor a platform knows.
func (e *Experiment) decodeSections() []Problem {
	var ps []Problem
	valid := append(section.Fields(reflectExperiment), sortedKeys(e.vocab.Sections)...)
	for _, k := range sortedKeys(e.Raw) {
		if e.vocab.Sections[k] == nil {
			ps = append(ps, section.Unknown(e.lines[k], "", k, valid))
		}
	}
	e.Sections = map[string]any{}
	for _, k := range sortedKeys(e.vocab.Sections) {
		var n *yaml.Node
		if raw, ok := e.Raw[k]; ok {
			n = &raw
		}
		v, p := e.vocab.Sections[k](n, section.Context{DBMSs: e.vocab.DBMSs,
			ClientPlatform: e.Client.Platform, ClientNode: e.Client.Node})
		e.Sections[k], ps = v, append(ps, p...)
	}
	return ps
}

// client checks the client: block.
func (c *checker) client() {
	cl := c.e.Client
	if cl.Platform != "" {
		c.oneOf("client.platform", cl.Platform, ClientPlatforms)
	}
	if n := cl.Node; n != "" && !dnsSubdomainRe.MatchString(n) {
		c.add("client.node", "%q is not valid (valid: a node name, a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253)", section.SafeText(n))
	}
	if cl.Node != "" && cl.Platform != "kubernetes" {
		c.add("client.node", "%q applies to client.platform kubernetes only (valid: set platform: kubernetes, or leave node out)", section.SafeText(cl.Node))
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
