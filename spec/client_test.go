package spec

import (
	"strings"
	"testing"

	"github.com/boxbench/boxbench/spec/section"
)

// TestClientWords: the client: block's values and a parametric storage's words come from the
// platforms' words (PlatformWords.Client, StorageParams), so spec names no platform: a platform
// "pods" of the vocabulary alone is a client.platform, and "claim:" its parametric storage.
func TestClientWords(t *testing.T) {
	v := vocab
	v.Platforms = map[string]PlatformWords{"native": vocab.Platforms["native"],
		"pods": {Storages: []string{"claim:"}, Networks: []string{"host"}, Client: true,
			StorageParams: map[string]section.Param{"claim:": {What: "claim class", Example: "fast"}}}}
	spec := func(client, storage string) string {
		return strings.Replace(good, "  platform: [native, docker]\n  storage: [bind, overlay]\n",
			"  platform: [native, pods]\n  storage: ["+storage+"]\n", 1) + "client: " + client + "\n"
	}
	if _, err := Parse([]byte(spec("{platform: pods, node: n1}", "bind, claim:fast")), "c.yaml", v); err != nil {
		t.Fatalf("a client on pods and storage claim:fast: %v", err)
	}
	for _, tc := range []struct{ client, storage, want string }{
		{"{platform: kubernetes}", "bind", `client.platform: "kubernetes" is not valid (valid: host, pods)`},
		{"{platform: host, node: n1}", "bind", `client.node: "n1" applies to client.platform pods only (valid: set platform: pods, or leave node out)`},
		{"{platform: pods}", "claim:", `matrix.storage: "claim:" needs a claim class (valid: e.g. claim:fast)`},
		{"{platform: pods}", "claim:Bad_One", `"claim:Bad_One" is not valid`},
	} {
		if _, err := Parse([]byte(spec(tc.client, tc.storage)), "c.yaml", v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("client %s, storage %s: want %q in:\n%v", tc.client, tc.storage, tc.want, err)
		}
	}
	noPods := strings.Replace(spec("{platform: pods}", "bind"), "[native, pods]", "[native]", 1)
	if _, err := Parse([]byte(noPods), "c.yaml", v); err == nil ||
		!strings.Contains(err.Error(), "client.platform: pods, but no cell runs on platform pods (valid: host, or add pods to matrix.platform)") {
		t.Errorf("a client on pods without a pods cell: %v", err)
	}
}
