package spec

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// Client says where the load generator runs: on this host (default) or in a place of a
// platform's own (a platform whose words have Client: kubernetes's pods, on node, default the
// server's node).
type Client struct {
	Platform string `yaml:"platform"`
	Node     string `yaml:"node"`
}

// ClientHost is client.platform's value for this host, the default.
const ClientHost = "host"

// clientPlatforms are the platforms client.platform may name besides ClientHost, sorted.
func (v Vocabulary) clientPlatforms() []string {
	var out []string
	for _, n := range v.PlatformNames() {
		if v.Platforms[n].Client {
			out = append(out, n)
		}
	}
	return out
}

// storageParams are the parametric storages of every platform (an entry of Storages ending in
// ':'), each with what its parameter names.
func (v Vocabulary) storageParams() map[string]section.Param {
	out := map[string]section.Param{}
	for _, w := range v.Platforms {
		for _, s := range w.Storages {
			if strings.HasSuffix(s, ":") {
				out[s] = w.StorageParams[s]
			}
		}
	}
	return out
}

// dnsSubdomainRe: a DNS-1123 subdomain (a node's or a storage parameter's name).
var dnsSubdomainRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// parametric says whether v is a parametric storage value valid has a prefix for ("pvc:fast"
// when valid holds "pvc:"), its parameter a DNS-1123 subdomain of at most 63 characters.
func parametric(valid []string, v string) bool {
	for _, p := range valid {
		if strings.HasSuffix(p, ":") && strings.HasPrefix(v, p) && len(v) <= len(p)+63 && dnsSubdomainRe.MatchString(v[len(p):]) {
			return true
		}
	}
	return false
}

// SectionDecoder decodes and validates a top-level section that a platform owns
// (platform.Settings): n is the section's node, nil when the spec leaves it out; the value is
// what the platform is then configured with and what spec must know of it (Experiment.Sections),
// the problems every one found (section.Decode and section.Checker give them lines and field
// paths).
type SectionDecoder func(n *yaml.Node, c section.Context) (Decoded, []Problem)

// Decoded is a platform's section as its decoder made it (Experiment.Sections).
type Decoded = section.Decoded

// NoCluster is the cluster key's value for a cell on no named cluster (the platform's default).
const NoCluster = "none"

// clusterNames are the values the matrix key cluster may take: those the sections name.
func (e *Experiment) clusterNames() []string {
	out := []string{NoCluster}
	for _, k := range sortedKeys(e.Sections) {
		out = append(out, e.Sections[k].Clusters...)
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
	e.Sections = map[string]Decoded{}
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

// client checks the client: block against the platforms whose words have Client.
func (c *checker) client() {
	cl := c.e.Client
	sites := c.e.vocab.clientPlatforms()
	if cl.Platform != "" {
		c.oneOf("client.platform", cl.Platform, append([]string{ClientHost}, sites...))
	}
	if n := cl.Node; n != "" && !dnsSubdomainRe.MatchString(n) {
		c.add("client.node", "%q is not valid (valid: a node name, a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253)", section.SafeText(n))
	}
	if cl.Node != "" && !contains(sites, cl.Platform) {
		if len(sites) == 0 {
			c.add("client.node", "%q applies to no client.platform of this build (valid: leave node out)", section.SafeText(cl.Node))
		} else {
			or := strings.Join(sites, " or ")
			c.add("client.node", "%q applies to client.platform %s only (valid: set platform: %s, or leave node out)", section.SafeText(cl.Node), or, or)
		}
	}
	if contains(sites, cl.Platform) {
		platforms := c.e.ValuesOf("platform")
		if platforms == nil {
			platforms = []string{c.e.DefaultPlatform()}
		}
		if !contains(platforms, cl.Platform) {
			// A client there needs a box of that platform: without one the setting would be ignored.
			c.add("client.platform", "%s, but no cell runs on platform %s (valid: %s, or add %s to matrix.platform)", cl.Platform, cl.Platform, ClientHost, cl.Platform)
		}
	}
	params := c.e.vocab.storageParams()
	for _, d := range append(append([]Dim{}, c.e.Matrix.Dims...), c.e.Matrix.Zip...) {
		for _, v := range d.Values {
			if p, ok := params[v]; ok && d.Key == "storage" {
				c.put(Problem{Line: d.Line, Field: "matrix.storage",
					Message: fmt.Sprintf("%q needs a %s (valid: e.g. %s%s)", v, p.What, v, p.Example)})
			}
		}
	}
}
