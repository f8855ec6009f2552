package builtin

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/study"
)

// TestStudies plans every study under studies/ as `boxbench plan` does, with every cell
// runnable (the host's checks are the plan's, not the study's): each parses against this
// build's vocabulary, builds its workloads, and each published effect selects at least one
// compared cell whose baseline (the experiment's, or the one the effect names) is in the plan.
func TestStudies(t *testing.T) {
	files, err := filepath.Glob("../studies/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("want the five studies, found %v (%v)", files, err)
	}
	v := Vocabulary(Platforms(nil))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		e, err := spec.Parse(data, f, v)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if e.Published == nil {
			t.Errorf("%s: no published: block", f)
			continue
		}
		p, problems := plan.Expand(context.Background(), e, 1, func(context.Context, *plan.Cell) error { return nil })
		if len(problems) > 0 {
			t.Errorf("%s: %v", f, problems)
			continue
		}
		for _, c := range p.Cells {
			if _, err := Workload(e, c); err != nil {
				t.Errorf("%s: cell %s: %v", f, c.ID, err)
			}
		}
		for _, eff := range e.Published.Effects {
			if n := comparedCells(p, eff); n == 0 {
				t.Errorf("%s: effect %s selects no compared cell", f, eff.Name)
			}
		}
	}
}

// comparedCells counts the cells eff selects that have a baseline other than themselves: the
// one eff names, or the plan's.
func comparedCells(p *plan.Plan, eff study.Effect) int {
	n := 0
	for _, c := range p.Cells {
		if !eff.Selects(c.Params) {
			continue
		}
		want := eff.BaselineParams(c.Params)
		if want == nil {
			if b := p.Baseline[c]; b != nil && b != c {
				n++
			}
			continue
		}
		for _, b := range p.Cells {
			if b != c && maps.Equal(b.Params, want) {
				n++
			}
		}
	}
	return n
}
