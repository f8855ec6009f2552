package study

import (
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

func TestJudge(t *testing.T) {
	slower69 := Effect{Direction: Slower, Overhead: f(69)}
	slowerRange := Effect{Direction: Slower, Overhead: f(40), Range: []float64{30, 50}}
	slowerUnknown := Effect{Direction: Slower}
	faster := Effect{Direction: Faster, Overhead: f(-49)}
	none := Effect{Direction: None}
	iv := func(lo, hi float64) Estimate {
		return Estimate{Overhead: (lo + hi) / 2, Low: lo, High: hi, Valid: true}
	}
	for _, tc := range []struct {
		name string
		e    Effect
		est  Estimate
		want Verdict
	}{
		{"figure inside", slower69, iv(60, 75), AgreesSize},
		{"figure at the edge", slower69, iv(69, 80), AgreesSize},
		{"right side, smaller", slower69, iv(5, 20), AgreesDirection},
		{"right side, larger", slower69, iv(80, 90), AgreesDirection},
		{"range overlaps", slowerRange, iv(45, 60), AgreesSize},
		{"range missed", slowerRange, iv(55, 60), AgreesDirection},
		{"wrong side", slower69, iv(-20, -5), Contradicts},
		{"holds 0, excludes figure", slower69, iv(-3, 10), Contradicts},
		{"wider than the effect", slower69, iv(-10, 80), CannotTell},
		{"no size, right side", slowerUnknown, iv(3, 9), AgreesDirection},
		{"no size, holds 0", slowerUnknown, iv(-3, 9), CannotTell},
		{"no size, wrong side", slowerUnknown, iv(-9, -3), Contradicts},
		{"faster inside", faster, iv(-60, -40), AgreesSize},
		{"faster but slower here", faster, iv(10, 20), Contradicts},
		{"faster, smaller", faster, iv(-20, -5), AgreesDirection},
		{"none, holds 0", none, iv(-2, 3), AgreesSize},
		{"none, a difference", none, iv(5, 9), Contradicts},
		{"no interval", slower69, Estimate{Overhead: 50}, CannotTell},
		{"emulated", slower69, Estimate{Valid: true, Low: 60, High: 75, NotComparable: "the VM is emulated (TCG)"}, NotComparable},
		{"deviation", Effect{Direction: Slower, NotComparable: "one host for three VMs"}, iv(1, 2), NotComparable},
	} {
		got, why := Judge(tc.e, tc.est)
		if got != tc.want || why == "" {
			t.Errorf("%s: %q (%s), want %q", tc.name, got, why, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	p := &Published{Effects: []Effect{
		{Name: "a", Cells: map[string]string{"runtime": "runsc"}, Direction: Slower, Overhead: f(-5), Source: "Fig. 3"},
		{Name: "a", Direction: "worse"},
		{Name: "c", Cells: map[string]string{"k": "v"}, Direction: Slower, Overhead: f(10), Range: []float64{12, 20}, Source: "Table 2"},
		{Name: "d", Cells: map[string]string{"k": "v"}, Direction: None, Range: []float64{0, 1}, Source: "text"},
		{Name: "e", Cells: map[string]string{"k": "v\x1b[2J"}, Direction: None, Source: "text\u202e"},
	}}
	got := strings.Join(p.Validate(), "\n")
	for _, want := range []string{
		"study: missing",
		"effects[0].overhead: -5 % disagrees with direction slower",
		`effects[1].name: "a" is used twice`,
		"effects[1].cells: missing",
		"effects[1].source: missing",
		`effects[1].direction: "worse" is not valid (valid: slower, faster, none)`,
		"effects[2].range: [12 20] does not hold the overhead 10",
		"effects[3].range: a range needs the overhead it surrounds",
		"effects[4].source: holds the control character U+202E",
		"effects[4].cells: holds the control character U+001B",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if (*Published)(nil).Validate() != nil {
		t.Error("a spec without published: has no problems")
	}
}

func TestFigure(t *testing.T) {
	for e, want := range map[*Effect]string{
		{Direction: Slower, Overhead: f(69)}:                                "slower, 69 %",
		{Direction: Faster, Overhead: f(-48.7), Range: []float64{-95, -10}}: "faster, -48.7 % (range -95 to -10 %)",
		{Direction: Slower}: "slower, size unknown",
		{Direction: None}:   "no measurable difference",
	} {
		if got := e.Figure(); got != want {
			t.Errorf("%+v: %q, want %q", *e, got, want)
		}
	}
}

func TestSelects(t *testing.T) {
	e := Effect{Cells: map[string]string{"runtime": "runsc"}, Baseline: map[string]string{"runtime": "runc"}}
	cell := map[string]string{"runtime": "runsc", "network": "host"}
	if !e.Selects(cell) || e.Selects(map[string]string{"runtime": "runc", "network": "host"}) {
		t.Error("Selects")
	}
	if b := e.BaselineParams(cell); b["runtime"] != "runc" || b["network"] != "host" || cell["runtime"] != "runsc" {
		t.Errorf("BaselineParams %v (cell %v)", b, cell)
	}
	if (Effect{}).BaselineParams(cell) != nil {
		t.Error("no baseline named: the experiment's")
	}
}

// The forecast aims at the published size (the end of its range nearer zero), or at the size
// seen here when the study gave none; fewer runs detect a larger target, and a comparison that
// could already detect its target needs no more runs than it has.
func TestForecastFor(t *testing.T) {
	est := Estimate{Overhead: 4, Low: -6, High: 14, Valid: true, MDE: 20, N: 4}
	big, ok1 := ForecastFor(Effect{Direction: Slower, Overhead: f(40), Range: []float64{30, 50}}, est)
	small, ok2 := ForecastFor(Effect{Direction: Slower, Overhead: f(10)}, est)
	seen, ok3 := ForecastFor(Effect{Direction: Slower}, est)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("no forecast: %v %v %v", ok1, ok2, ok3)
	}
	if big.Target != 30 || small.Target != 10 || seen.Target != 4 {
		t.Errorf("targets %v %v %v, want 30 (the range's near end), 10, 4 (the size seen here)", big.Target, small.Target, seen.Target)
	}
	if !(big.Runs <= est.N && small.Runs > est.N && seen.Runs > small.Runs) || !small.Reachable {
		t.Errorf("runs %d (30 %%), %d (10 %%), %d (4 %%) at an MDE of 20 %% with 4 runs", big.Runs, small.Runs, seen.Runs)
	}
	if !strings.Contains(small.Text(), "runs per cell would detect 10 %") {
		t.Errorf("text %q", small.Text())
	}
	if far, _ := ForecastFor(Effect{Direction: Slower, Overhead: f(0.01)}, est); far.Reachable || !strings.Contains(far.Text(), "would not detect") {
		t.Errorf("an unreachable target: %+v %q", far, far.Text())
	}
	if _, ok := ForecastFor(Effect{Direction: Slower, Overhead: f(10)}, Estimate{Valid: true}); ok {
		t.Error("a forecast without a detectable effect")
	}
}
