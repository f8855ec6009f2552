package plan

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/vocabtest"
)

func parse(t *testing.T, text string) *spec.Experiment {
	t.Helper()
	e, err := spec.Parse([]byte(text), "t.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const placed = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: p
dbms: redis
workload: {type: ycsb, duration: 5s}
dataset: {records: 100}
limits: {cpus: 1}
placement: {client: "1", server: "0"}
matrix:
  platform: [native, docker]
  cpus: ["1", "0.5"]
`

// The server's placement reaches every platform through the box's cpuset limit, never
// through a platform-specific path.
func TestServerPlacementIsEveryCellsCpuset(t *testing.T) {
	p, problems := Expand(context.Background(), parse(t, placed), 1, func(context.Context, *Cell) error { return nil })
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(p.Cells) != 4 {
		t.Fatalf("%d cells", len(p.Cells))
	}
	for _, c := range p.Cells {
		if c.Resources.Cpuset != "0" {
			t.Errorf("%s: cpuset %q, want placement.server 0", c.ID, c.Resources.Cpuset)
		}
	}
}

func TestDuetPairs(t *testing.T) {
	text := strings.Replace(placed, `placement: {client: "1", server: "0"}`+"\n", "order: duet\n", 1)
	p, problems := Expand(context.Background(), parse(t, text), 7, func(context.Context, *Cell) error { return nil })
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	pairs := DuetPairs(p, 1, 20)
	// Two docker cells (cpus 1 and 0.5), each beside its native baseline, 20 rounds.
	if len(pairs) != 40 {
		t.Fatalf("%d pairs, want 40", len(pairs))
	}
	sides := [2]int{}
	for _, pr := range pairs {
		if pr.Cell.Platform != "docker" || pr.Baseline.Platform != "native" || pr.Cell.Params["cpus"] != pr.Baseline.Params["cpus"] {
			t.Errorf("pair %s vs %s", pr.Cell.ID, pr.Baseline.ID)
		}
		sides[pr.BaselineSide]++
	}
	// Sides are drawn, not fixed: both occur (P(all 40 on one side) = 2^-39).
	if sides[0] == 0 || sides[1] == 0 {
		t.Errorf("baseline sides %v: not drawn", sides)
	}
	// Adding rounds later does not change earlier ones.
	again := DuetPairs(p, 1, 10)
	defer func() {
		if t.Failed() {
			return
		}
		sharedBaselineRuns(t)
	}()
	for i := range again {
		if again[i] != pairs[i] {
			t.Fatalf("pair %d differs when fewer rounds are planned", i)
		}
	}
}

// A baseline shared by two cells runs twice a round; every run of the duets has its own id,
// and the baseline's reps count 1, 2, 3, ... without gaps.
func sharedBaselineRuns(t *testing.T) {
	b, x, y := &Cell{ID: "platform=native"}, &Cell{ID: "platform=docker"}, &Cell{ID: "platform=lxc"}
	p := &Plan{Cells: []*Cell{b, x, y}, Baseline: map[*Cell]*Cell{b: b, x: b, y: b}, Seed: 3}
	seen := map[string]bool{}
	var reps []int
	for _, pr := range DuetPairs(p, 1, 5) {
		rs := pr.Runs()
		if rs[pr.BaselineSide].Cell != b || rs[1-pr.BaselineSide].Cell != pr.Cell || rs[1-pr.BaselineSide].Rep != pr.Round {
			t.Fatalf("pair runs %v", rs)
		}
		for _, r := range rs {
			if seen[r.ID()] {
				t.Fatalf("run %s twice", r.ID())
			}
			seen[r.ID()] = true
		}
		reps = append(reps, pr.BaselineRep)
	}
	slices.Sort(reps)
	for i, r := range reps {
		if r != i+1 {
			t.Fatalf("baseline reps %v", reps)
		}
	}
}
