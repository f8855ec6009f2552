package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// calCell is a cell of a calibration experiment with one throughput per round (1-based).
func calCell(replica, cpus, baseline string, vals []float64) *Cell {
	id := "cpus=" + cpus + "/replica=" + replica
	c := &Cell{ID: id, Params: map[string]string{"cpus": cpus, "replica": replica}, BaselineID: baseline, Runs: len(vals)}
	for i, v := range vals {
		c.RunIDs, c.Reps = append(c.RunIDs, fmt.Sprintf("%s#%d", id, i+1)), append(c.Reps, i+1)
		c.Samples = append(c.Samples, v)
		c.Untruncated = append(c.Untruncated, math.NaN())
	}
	return c
}

func TestCalibration(t *testing.T) {
	// Eight rounds with a shared drift (round r runs at 1 + 0.05·r of the base rate, as a host
	// whose load changes between rounds), a tiny independent noise per run, and a known 10 %
	// cut in the cpus=0.45 cell.
	const base = "cpus=0.50/replica=a"
	drift := func(r int) float64 { return 40000 * (1 + 0.05*float64(r%4)) }
	noise := []float64{1.001, 0.999, 1.002, 0.998, 1.000, 1.001, 0.999, 1.000}
	var a, b, cut []float64
	for r := 0; r < 8; r++ {
		a = append(a, drift(r)*noise[r])
		b = append(b, drift(r)*noise[(r+3)%8])
		cut = append(cut, 0.9*drift(r)*noise[(r+5)%8])
	}
	rep := &Report{Keys: []string{"cpus", "replica"}, Cells: []*Cell{
		calCell("a", "0.50", base, a), calCell("b", "0.50", base, b), calCell("a", "0.45", base, cut)}}
	cals := rep.calibrations()
	if len(cals) != 1 {
		t.Fatalf("%d series, want 1 (no run stored the untruncated throughput)", len(cals))
	}
	sizes := cals[0].Sizes
	if len(sizes) != 2 || sizes[0].N != 4 || sizes[1].N != 8 {
		t.Fatalf("sizes %+v, want n=4 and n=8", sizes)
	}
	at4 := sizes[0]
	if at4.AATests != 2 {
		t.Errorf("n=4: %d A/A tests, want 2 (one pair, two blocks of 4 rounds)", at4.AATests)
	}
	// The drift is shared by both replicas of a round: pairing removes it, so the paired noise
	// floor must be far below the unpaired one, and neither analysis may call the A/A slower.
	if !(at4.NoiseFloorPaired.Max < at4.NoiseFloorUnpaired.Min/5) {
		t.Errorf("n=4: paired floor %+v not well below unpaired %+v", at4.NoiseFloorPaired, at4.NoiseFloorUnpaired)
	}
	if at4.FalsePositivesPaired != 0 || at4.FalsePositivesUnpaired != 0 {
		t.Errorf("n=4: false positives %d unpaired, %d paired, want 0", at4.FalsePositivesUnpaired, at4.FalsePositivesPaired)
	}
	if len(at4.Effects) != 1 {
		t.Fatalf("n=4: effects %+v, want the cpus=0.45 cell", at4.Effects)
	}
	k := at4.Effects[0]
	if math.Abs(k.TruePct-10) > 1e-9 || k.Tests != 2 || k.DetectedPaired != 2 {
		t.Errorf("n=4 known effect %+v: want true 10 %%, 2 tests, both detected paired", k)
	}
	// Unpaired, a 10 % cut under ±10 % drift between rounds is not found at n=4.
	if k.DetectedUnpaired != 0 {
		t.Errorf("n=4: unpaired detected the cut in %d of 2 despite the drift", k.DetectedUnpaired)
	}
	var text strings.Builder
	writeTextCalibration(&text, rep.calibrations())
	for _, want := range []string{"n=4: noise floor unpaired", "false positives unpaired 0/2, paired 0/2", "known effect 10.0 %"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	rep.Keys = []string{"cpus"}
	if rep.calibrations() != nil {
		t.Error("a calibration without the replica key")
	}
}

// The calibration kept for plan and doctor is the headline series' floors of the section
// Build computed, with the host that measured them.
func TestStored(t *testing.T) {
	const base = "cpus=0.50/replica=a"
	var a, b []float64
	for r := 0; r < 8; r++ {
		a = append(a, 40000*(1+0.03*float64(r%3)))
		b = append(b, 40000*(1+0.03*float64((r+1)%3)))
	}
	env := map[string]string{"cpu_model": "AMD EPYC", "num_cpu": "2", "kernel": "6.18"}
	rep := &Report{Keys: []string{"cpus", "replica"}, Env: env, Experiment: Experiment{ID: "calibrate-1", CreatedAt: "2026-11-27T00:00:00Z"},
		Cells: []*Cell{calCell("a", "0.50", base, a), calCell("b", "0.50", base, b)}}
	s, ok := rep.Stored()
	if !ok {
		t.Fatal("no calibration to keep")
	}
	cal := rep.calibrations()[0]
	if len(s.Floors) != 2 || s.Floors[1].N != 8 || s.Floors[1].Unpaired != cal.Sizes[1].NoiseFloorUnpaired.Median ||
		s.Floors[1].Paired != cal.Sizes[1].NoiseFloorPaired.Median || math.IsNaN(s.Floors[1].Unpaired) || s.Duet {
		t.Fatalf("kept %+v from %+v", s, cal.Sizes)
	}
	if s.Experiment != "calibrate-1" || !s.SameHost(env) {
		t.Errorf("kept %+v: not the experiment's or not its host's", s)
	}
	if _, ok := (&Report{Keys: []string{"cpus"}}).Stored(); ok {
		t.Error("an experiment without the replica key kept a calibration")
	}
}
