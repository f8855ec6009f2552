package builtin

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/boxbench/boxbench/internal/vocabtest"
	"github.com/boxbench/boxbench/spec"
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
		if (g.CheckJob == nil) != (w.CheckJob == nil) {
			t.Errorf("workload kind %s: job check builtin %v, fixture %v", g.Name, g.CheckJob != nil, w.CheckJob != nil)
		}
		g.CheckJob, w.CheckJob = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("workload kind %d: builtin %+v, fixture %+v", i, g, w)
		}
	}
	for name, w := range want.Platforms {
		if g, ok := got.Platforms[name]; !ok || !reflect.DeepEqual(g, w) {
			t.Errorf("platform %s: builtin %+v, fixture %+v", name, g, w)
		}
	}
}
