package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/results"

	"github.com/boxbench/boxbench/stats"
)

// Under order: duet the pairs are the duets, matched by token whatever the run numbers, and
// the verdict is the paired one: a steady 5 % cut that the drift between pairs hides from
// the unpaired test is found.
func TestDuetVerdict(t *testing.T) {
	drift := []float64{30000, 42000, 36000, 48000, 33000, 45000}
	base := &Cell{ID: "storage=bind", BaselineID: "storage=bind"}
	cell := &Cell{ID: "storage=tmpfs", BaselineID: "storage=bind"}
	for i, d := range drift {
		tok := results.Duet{Pair: fmt.Sprintf("r%d-x", i+1), Round: i + 1}
		base.Reps = append(base.Reps, len(drift)-i) // numbered otherwise
		base.Samples, base.Duets = append(base.Samples, d), append(base.Duets, tok)
		cell.Reps = append(cell.Reps, i+1)
		cell.Samples, cell.Duets = append(cell.Samples, 0.95*d*(1+0.002*float64(i%2))), append(cell.Duets, tok)
	}
	for _, c := range []*Cell{base, cell} {
		c.Runs = len(c.Samples)
	}
	rep := &Report{Cells: []*Cell{base, cell}}
	rep.compareCells(false, "none")
	if v := cell.Overhead.Verdict; v != stats.VerdictNoDifference {
		t.Fatalf("unpaired, by round numbers: %s (the drift should hide the cut)", v)
	}
	rep.compareCells(false, "duets")
	if cell.Paired == nil || cell.Paired.N != len(drift) || cell.Overhead.Verdict != stats.VerdictSlower {
		t.Fatalf("duet: paired %+v verdict %s", cell.Paired, cell.Overhead.Verdict)
	}
	if r := cell.Paired.Ratio; r < 0.949 || r > 0.952 {
		t.Errorf("paired ratio %.4f, want about 0.95", r)
	}
	if o := cell.Overhead; o.OverheadPct != cell.Paired.OverheadPct || o.OverheadPctCI != cell.Paired.OverheadPctCI || o.MDEPct != cell.Paired.MDEPct {
		t.Errorf("the table's overhead is not the duets': %+v vs %+v", o, cell.Paired)
	}
	if !strings.Contains(strings.Join(cell.Overhead.Notes, " "), "verdict from the 6 duets' paired ratios") {
		t.Errorf("notes %v", cell.Overhead.Notes)
	}
}

// Under pairing: rounds each run is paired with the baseline's run of the same round: the
// same steady 5 % cut under drift between rounds is found, the table's figures are the paired
// ones and the note keeps the unpaired; a failed run's round drops out of the pairs; fewer
// than 2 pairs leave the unpaired verdict, saying so.
func TestRoundsVerdict(t *testing.T) {
	drift := []float64{30000, 42000, 36000, 48000, 33000, 45000}
	build := func(skip map[int]bool) (*Report, *Cell) {
		base := &Cell{ID: "storage=bind", BaselineID: "storage=bind"}
		cell := &Cell{ID: "storage=tmpfs", BaselineID: "storage=bind"}
		for i, d := range drift {
			base.Reps, base.Samples = append(base.Reps, i+1), append(base.Samples, d)
			if !skip[i+1] {
				cell.Reps, cell.Samples = append(cell.Reps, i+1), append(cell.Samples, 0.95*d*(1+0.002*float64(i%2)))
			}
		}
		for _, c := range []*Cell{base, cell} {
			c.Runs = len(c.Samples)
		}
		return &Report{Cells: []*Cell{base, cell}}, cell
	}
	rep, cell := build(map[int]bool{3: true})
	rep.compareCells(false, "none")
	if v := cell.Overhead.Verdict; v != stats.VerdictNoDifference || cell.Paired == nil {
		t.Fatalf("pairing none: %s, paired %+v (the drift should hide the cut; the pairs are still shown)", v, cell.Paired)
	}
	unpaired := *cell.Overhead
	rep.compareCells(false, "rounds")
	if cell.Paired == nil || cell.Paired.N != len(drift)-1 || cell.Overhead.Verdict != stats.VerdictSlower {
		t.Fatalf("rounds: paired %+v verdict %s", cell.Paired, cell.Overhead.Verdict)
	}
	if o := cell.Overhead; o.OverheadPct != cell.Paired.OverheadPct || o.MDEPct != cell.Paired.MDEPct || o.OverheadPct == unpaired.OverheadPct {
		t.Errorf("the table's overhead is not the rounds': %+v vs %+v", o, cell.Paired)
	}
	if n := strings.Join(cell.Overhead.Notes, " "); !strings.Contains(n, "verdict from the 5 rounds' paired ratios") ||
		!strings.Contains(n, "unpaired: ") {
		t.Errorf("notes %v", cell.Overhead.Notes)
	}
	rep, cell = build(map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true})
	rep.compareCells(false, "rounds")
	if cell.Paired != nil || !strings.Contains(strings.Join(cell.Overhead.Notes, " "), "fewer than 2 complete rounds") {
		t.Errorf("one pair: paired %+v, notes %v", cell.Paired, cell.Overhead.Notes)
	}
}

// The calibration of a duet experiment pairs the runs that ran together: the baseline's runs
// carry other numbers than its partners' (it runs once per partner and round).
func TestDuetCalibration(t *testing.T) {
	a := &Cell{ID: "replica=a", Params: map[string]string{"replica": "a"}, BaselineID: "replica=a"}
	b := &Cell{ID: "replica=b", Params: map[string]string{"replica": "b"}, BaselineID: "replica=a"}
	c := &Cell{ID: "replica=c", Params: map[string]string{"replica": "c"}, BaselineID: "replica=a"}
	for r := 1; r <= 8; r++ {
		d := 30000 * (1 + 0.1*float64(r%3)) // drift between duets, shared within one
		for j, x := range []*Cell{b, c} {
			tok := results.Duet{Pair: fmt.Sprintf("r%d-%d", r, j), Round: r}
			a.Reps, a.Samples, a.Duets = append(a.Reps, 2*(r-1)+j+1), append(a.Samples, d), append(a.Duets, tok)
			x.Reps, x.Samples, x.Duets = append(x.Reps, r), append(x.Samples, d*(1+0.001*float64(j))), append(x.Duets, tok)
		}
	}
	for _, x := range []*Cell{a, b, c} {
		x.Runs = len(x.Samples)
		for range x.Samples {
			x.Untruncated = append(x.Untruncated, math.NaN())
		}
	}
	rep := &Report{Keys: []string{"replica"}, Cells: []*Cell{a, b, c}}
	cals := rep.calibrations()
	if len(cals) != 1 || len(cals[0].Sizes) != 2 {
		t.Fatalf("calibrations %+v", cals)
	}
	at := cals[0].Sizes[0] // n = 4: 2 blocks of a–b and 2 of a–c; b and c never ran together
	if at.AATests != 4 || at.NoiseFloorPaired.Max > 0.5 {
		t.Fatalf("n=4: %+v", at)
	}
}
