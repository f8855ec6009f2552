package builtin

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/vocabtest"
)

// TestExamples loads every file under examples/ against this build's vocabulary: a shipped
// example must always be valid.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	v := Vocabulary(Platforms(nil))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := spec.Parse(data, f, v); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestVocabularyFixture keeps the vocabulary other packages' tests use truthful: every platform
// it names is described here exactly so.
func TestVocabularyFixture(t *testing.T) {
	got := Vocabulary(Platforms(nil))
	want := vocabtest.Vocabulary()
	if !reflect.DeepEqual(got.DBMSs, want.DBMSs) || got.Baseline != want.Baseline || !reflect.DeepEqual(got.Consistencies, want.Consistencies) {
		t.Errorf("dbms %v baseline %q consistencies %v; fixture %v %q %v", got.DBMSs, got.Baseline, got.Consistencies,
			want.DBMSs, want.Baseline, want.Consistencies)
	}
	if len(got.Workloads) != len(want.Workloads) || len(got.Workloads) == 0 {
		t.Errorf("workload kinds: builtin %d, fixture %d", len(got.Workloads), len(want.Workloads))
	}
	for i := range min(len(got.Workloads), len(want.Workloads)) {
		g, w := got.Workloads[i], want.Workloads[i]
		if !reflect.DeepEqual(g, w) {
			t.Errorf("workload kind %d: builtin %+v, fixture %+v", i, g, w)
		}
	}
	for name, w := range want.Platforms {
		if g, ok := got.Platforms[name]; !ok || !reflect.DeepEqual(g, w) {
			t.Errorf("platform %s: builtin %+v, fixture %+v", name, g, w)
		}
	}
	for key := range want.Sections {
		if got.Sections[key] == nil {
			t.Errorf("section %s: the fixture decodes it, builtin does not", key)
		}
	}
	// The topology rule is a function: the two must judge alike, a replication factor and a
	// consistency level included (a fixture that dropped them once accepted what builtin refuses).
	sync := false
	for _, name := range append(want.DBMSs, "nosuchdb") {
		for _, tp := range []spec.Topology{{Nodes: 3}, {Nodes: 1, Synchronous: &sync}, {Nodes: 3, ReplicationFactor: 5},
			{Nodes: 3, ReplicationFactor: 3, Consistency: "all"}, {Nodes: 0}} {
			if g, w := got.Topology(name, tp), want.Topology(name, tp); !reflect.DeepEqual(g, w) {
				t.Errorf("topology %+v of %s: builtin %q, fixture %q", tp, name, g, w)
			}
		}
	}
}

// TestVocabularyFromInfo: every platform's words in the spec vocabulary are its own Info's —
// storages, networks, client words, parametric storages, its section's decoder — so that spec
// names none of them.
func TestVocabularyFromInfo(t *testing.T) {
	ps := Platforms(nil)
	v := Vocabulary(ps)
	clients := 0
	for name, p := range ps {
		i, w := p.Info(), v.Platforms[name]
		if !reflect.DeepEqual(w.Storages, i.Storages) || !reflect.DeepEqual(w.Networks, i.Networks) ||
			w.Client != i.Client || !reflect.DeepEqual(w.StorageParams, i.StorageParams) {
			t.Errorf("platform %s: words %+v, Info %+v", name, w, i)
		}
		if i.Client {
			clients++
		}
		for _, s := range i.Storages {
			if strings.HasSuffix(s, ":") && i.StorageParams[s].What == "" {
				t.Errorf("platform %s: parametric storage %q says not what its parameter names", name, s)
			}
		}
		if s := i.Settings; s != nil && v.Sections[s.SectionKey()] == nil {
			t.Errorf("platform %s: no decoder for its section %s", name, s.SectionKey())
		}
	}
	if clients == 0 {
		t.Error("no platform of the build takes the client (client.platform has only host)")
	}
}
