package stats

import (
	"math"
	"testing"
)

// The forecast inverts the noise floor and agrees with DetectableEffect and PairedRatio on the
// data the floor came from.
func TestForecast(t *testing.T) {
	// Unpaired: two cells of 10 runs, CoV 10 %: the A/A half-width is t(.975, 18)·10·√0.2.
	half := 2.1009 * 10 * math.Sqrt(0.2)
	cov, ok := Spread(half, 10, false)
	if !ok || math.Abs(cov-0.10) > 1e-3 {
		t.Fatalf("unpaired spread %.4f, want 0.10", cov)
	}
	s := Summary{N: 10, Mean: 100, SD: 10}
	want, _ := DetectableEffect(s, s, 0.05, 0.8)
	if got := DetectableAt(cov, 10, false, 0.05, 0.8); math.Abs(got-want) > 0.05 {
		t.Errorf("detectable at 10: %.3f %%, DetectableEffect says %.3f", got, want)
	}
	if a, b := DetectableAt(cov, 4, false, 0.05, 0.8), DetectableAt(cov, 40, false, 0.05, 0.8); !(a > want && b < want) {
		t.Errorf("fewer runs must detect less (%.2f at 4), more runs more (%.2f at 40), than %.2f at 10", a, b, want)
	}
	n, ok := RunsFor(cov, want, false, 0.05, 0.8, 1000)
	if !ok || n != 10 {
		t.Errorf("runs for %.2f %%: %d %v, want 10", want, n, ok)
	}
	if n, ok := RunsFor(cov, 0.01, false, 0.05, 0.8, 50); ok || n != 50 {
		t.Errorf("an unreachable target: %d %v", n, ok)
	}

	// Paired: the per-round log ratios' sd gives PairedRatio's half-width and MDE.
	pairs := [][2]float64{{100, 101}, {100, 97}, {100, 103}, {100, 99}, {100, 96}, {100, 102}}
	p, err := PairedRatio(pairs, true, 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	ph := 100 * (p.RatioCI.Hi/p.Ratio - 1)
	sd, ok := Spread(ph, len(pairs), true)
	if !ok {
		t.Fatal("paired spread not ok")
	}
	if got := DetectableAt(sd, len(pairs), true, 0.05, 0.8); math.Abs(got-p.MDEPct) > 1e-6 {
		t.Errorf("paired detectable %.4f %%, PairedRatio says %.4f", got, p.MDEPct)
	}
	if _, ok := Spread(0, 10, false); ok {
		t.Error("a zero floor gave a spread")
	}
}

// A comparison's own detectable effect, inverted, gives back its spread, and RunsFor on that
// spread finds the comparison's own run count for its own detectable effect.
func TestSpreadFromMDE(t *testing.T) {
	for _, paired := range []bool{false, true} {
		mde := DetectableAt(0.08, 6, paired, 0.05, 0.8)
		s, ok := SpreadFromMDE(mde, 6, paired, 0.05, 0.8)
		if !ok || math.Abs(s-0.08) > 1e-9 {
			t.Errorf("paired %v: spread %.6f %v, want 0.08", paired, s, ok)
		}
		if n, ok := RunsFor(s, mde, paired, 0.05, 0.8, 1000); !ok || n != 6 {
			t.Errorf("paired %v: runs for its own %.2f %%: %d %v, want 6", paired, mde, n, ok)
		}
	}
	for _, bad := range []struct {
		mde float64
		n   int
	}{{0, 6}, {-1, 6}, {5, 1}, {math.Inf(1), 6}} {
		if _, ok := SpreadFromMDE(bad.mde, bad.n, false, 0.05, 0.8); ok {
			t.Errorf("SpreadFromMDE(%v, %d) is ok", bad.mde, bad.n)
		}
	}
}
