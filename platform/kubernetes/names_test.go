package kubernetes

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/boxbench/boxbench/platform"
)

func TestObjectName(t *testing.T) {
	for _, r := range []platform.Request{
		{Experiment: "quickstart-1a2b3c", Run: "r0001"},
		{Experiment: strings.Repeat("a.b_c-", 13) + "x", Run: "r0002"},
		{Experiment: "9.9_9", Run: "pt01"},
		{Experiment: "pt-kubernetes-123-crashed", Run: "pt10"},
	} {
		n, err := objectName(r)
		if err != nil {
			t.Errorf("%+v: %v", r, err)
			continue
		}
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			t.Errorf("%q is not a DNS-1123 label: %v", n, errs)
		}
		if m, _ := objectName(r); m == n {
			t.Errorf("two names of one box are equal (%s): a leftover would block a new box", n)
		}
	}
}

func TestLabelValue(t *testing.T) {
	long := strings.Repeat("e", 81)
	for in, want := range map[string]string{"quickstart-1a2b": "quickstart-1a2b", long: strings.Repeat("e", 63), "a_b.c": "a_b.c"} {
		got := labelValue(in)
		if got != want {
			t.Errorf("labelValue(%q) = %q, want %q", in, got, want)
		}
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("%q: %v", got, errs)
		}
	}
	m := meta(platform.Request{Experiment: long, Run: "r1"}, "bb-x", "server")
	if experimentOf(m) != long {
		t.Errorf("experimentOf = %q, want the whole id from the annotation", experimentOf(m))
	}
}

func TestNormalise(t *testing.T) {
	for in, want := range map[string]string{
		"boxbench/redis:0123456789abcdef": "docker.io/boxbench/redis:0123456789abcdef",
		"redis:7":                         "docker.io/library/redis:7",
		"registry.example:5000/db/pg:16":  "registry.example:5000/db/pg:16",
		"localhost/x:1":                   "localhost/x:1",
	} {
		if got := normalise(in); got != want {
			t.Errorf("normalise(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestManifestDigest(t *testing.T) {
	// `ctr images ls name==REF`, captured from the local cluster's containerd 1.6.20 (Debian 12).
	ls, err := os.ReadFile("testdata/ctr-images-ls.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := manifestDigest(string(ls), "docker.io/boxbench/redis:b5412401eda45870"); got != "sha256:453f8c914961c1b81044eef7b62d011b61fcde28edec5e95afcbfd57caec618f" {
		t.Errorf("got %q", got)
	}
	if got := manifestDigest(string(ls), "docker.io/boxbench/redis:other"); got != "" {
		t.Errorf("another ref matched: %q", got)
	}
}

func TestInfoOffersPVC(t *testing.T) {
	i := New(nil, nil).Info()
	for s, want := range map[string]bool{"pvc:standard": true, "pvc:local-path": true, "pvc:": false, "pvc:Bad_Class": false,
		"hostpath": true, "bind": false, "pvc:a/../b": false} {
		if got := i.Offers(s, NetworkPod); got != want {
			t.Errorf("Offers(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestValidateConfig(t *testing.T) {
	if err := ValidateConfig(Config{Namespace: "bench", Node: "node-1.example"}); err != nil {
		t.Error(err)
	}
	err := ValidateConfig(Config{Namespace: "Bad_NS", Node: "a b"})
	if err == nil || !strings.Contains(err.Error(), "Bad_NS") || !strings.Contains(err.Error(), "a b") {
		t.Errorf("want both names refused, got %v", err)
	}
}

// The kube-multi.sh node names (default instance and named ones) map to their containerd
// sockets; anything else (another cluster's node, a name that would leave /run/boxbench) to none.
func TestMultiSocket(t *testing.T) {
	for node, want := range map[string]string{
		"bbmulti-1":           "/run/boxbench/multi/n1/containerd.sock",
		"bbmulti-b-4":         "/run/boxbench/multi-b/n4/containerd.sock",
		"bbmulti-vx2-9":       "/run/boxbench/multi-vx2/n9/containerd.sock",
		"bbmulti-0":           "",
		"bbmulti-10":          "",
		"bbmulti-..-1":        "",
		"bbmulti-toolong-1":   "",
		"bbmulti-B-1":         "",
		"worker-1":            "",
		"bbmulti-b-1/../../x": "",
	} {
		if got := multiSocket(node); got != want {
			t.Errorf("multiSocket(%q) = %q, want %q", node, got, want)
		}
	}
}
