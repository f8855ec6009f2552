package stats

import (
	"math"
	"strings"
	"testing"
)

// TestDiffCI checks Welch's interval against R's documented example, the sleep data of
// ?t.test: t.test(extra ~ group, data = sleep) prints df = 17.776 and the 95 percent
// confidence interval -3.3654832 0.2054832 for mean(group 1) − mean(group 2).
func TestDiffCI(t *testing.T) {
	g1 := []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	g2 := []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
	iv, note := DiffCI(Summarize(g2), Summarize(g1), 0.95) // candidate g1 − baseline g2
	if !iv.Valid || note != "" {
		t.Fatalf("interval %+v, note %q", iv, note)
	}
	if math.Abs(iv.Lo-(-3.3654832)) > 5e-7 || math.Abs(iv.Hi-0.2054832) > 5e-7 {
		t.Errorf("CI = [%.7f, %.7f], want [-3.3654832, 0.2054832] (R)", iv.Lo, iv.Hi)
	}
	b, c := Summarize(g2), Summarize(g1)
	if df := welchDF(c.SD*c.SD/10, b.SD*b.SD/10, 9, 9); math.Abs(df-17.776) > 5e-4 {
		t.Errorf("df = %.4f, want 17.776 (R)", df)
	}
	// The sign follows candidate − baseline.
	if swapped, _ := DiffCI(Summarize(g1), Summarize(g2), 0.95); math.Abs(swapped.Lo+iv.Hi) > 1e-12 || math.Abs(swapped.Hi+iv.Lo) > 1e-12 {
		t.Errorf("swapped %+v is not the negation of %+v", swapped, iv)
	}
}

func TestDiffCISmall(t *testing.T) {
	if iv, note := DiffCI(Summarize([]float64{1}), Summarize([]float64{2, 3}), 0.95); iv.Valid || !strings.Contains(note, "2 runs") {
		t.Errorf("one run: %+v %q", iv, note)
	}
	iv, note := DiffCI(Summarize([]float64{5, 5, 5}), Summarize([]float64{7, 7}), 0.95)
	if !iv.Valid || iv.Lo != 2 || iv.Hi != 2 || !strings.Contains(note, "no spread") {
		t.Errorf("no spread: %+v %q", iv, note)
	}
	// One side without spread: the interval is the other side's alone.
	iv, _ = DiffCI(Summarize([]float64{5, 5, 5}), Summarize([]float64{6, 8}), 0.95)
	if want := Summarize([]float64{6, 8}).CI95; math.Abs(iv.Lo-(want.Lo-5)) > 1e-9 || math.Abs(iv.Hi-(want.Hi-5)) > 1e-9 {
		t.Errorf("one side without spread: %+v, want the candidate's CI less 5 (%+v)", iv, want)
	}
}
