package stats

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestDetectableEffect checks the formula against a hand computation and its direction: more
// runs or less spread detect smaller effects.
func TestDetectableEffect(t *testing.T) {
	s := Summary{N: 10, Mean: 100, SD: 10}
	got, ok := DetectableEffect(s, s, 0.05, 0.8)
	// se = sqrt(2·10²/10) = 4.472; df = 18; t(.975) = 2.1009, t(.8) = 0.8621.
	if want := (2.1009 + 0.8621) * math.Sqrt(20); !ok || math.Abs(got-want) > 0.05 {
		t.Errorf("MDE = %.3f %%, want %.3f", got, want)
	}
	more := Summary{N: 40, Mean: 100, SD: 10}
	if m, _ := DetectableEffect(more, more, 0.05, 0.8); m >= got {
		t.Errorf("40 runs detect %.2f %%, not less than 10 runs' %.2f %%", m, got)
	}
	if _, ok := DetectableEffect(Summary{N: 1, Mean: 1}, s, 0.05, 0.8); ok {
		t.Error("one run: ok")
	}
	if m, ok := DetectableEffect(Summary{N: 3, Mean: 5}, Summary{N: 3, Mean: 5}, 0.05, 0.8); !ok || m != 0 {
		t.Errorf("no spread: %v %v", m, ok)
	}
}

// TestPairedRemovesDrift: a drift shared by both cells in each round widens the unpaired
// interval but not the paired one.
func TestPairedRemovesDrift(t *testing.T) {
	var pairs [][2]float64
	var b, c []float64
	for i, drift := range []float64{1, 0.7, 1.3, 0.9, 1.1, 0.8} {
		wobble := 1 + 0.005*float64(i%2)
		pairs = append(pairs, [2]float64{100 * drift, 97 * drift * wobble})
		b, c = append(b, 100*drift), append(c, 97*drift*wobble)
	}
	p, err := PairedRatio(pairs, true, 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.Ratio-0.9724) > 0.01 || !p.RatioCI.Valid || p.RatioCI.Contains(1) {
		t.Errorf("paired ratio %.4f CI %+v: want ≈0.97 excluding 1", p.Ratio, p.RatioCI)
	}
	u, _ := Compare(b, c, CompareOptions{HigherIsBetter: true})
	if !u.RatioCI.Contains(1) || p.MDEPct >= 5 {
		t.Errorf("unpaired CI %+v should contain 1 under the drift; paired MDE %.2f %% should be small", u.RatioCI, p.MDEPct)
	}
	if _, err := PairedRatio(pairs[:1], true, 0.05, 0.8); err == nil {
		t.Error("one round accepted")
	}
	if _, err := PairedRatio([][2]float64{{1, 0}, {1, 1}}, true, 0.05, 0.8); err == nil {
		t.Error("a zero accepted")
	}
}

// TestNeedMoreVs: a noisy comparison needs more runs until its detectable effect is within the
// target, and never beyond Max.
func TestNeedMoreVs(t *testing.T) {
	rule := AdaptiveRule{Min: 3, Max: 10, TargetEffect: 0.03}
	noisy := []float64{100, 90, 110}
	if more, why := NeedMoreVs(noisy, noisy, rule); !more {
		t.Errorf("±10 %% spread at n=3 meets a 3 %% target: %s", why)
	}
	tight := []float64{100, 100.2, 99.9, 100.1}
	if more, why := NeedMoreVs(tight, tight, rule); more {
		t.Errorf("0.1 %% spread does not meet a 3 %% target: %s", why)
	}
	full := make([]float64, 10)
	for i := range full {
		full[i] = 100 + float64(i%2)*20
	}
	if more, _ := NeedMoreVs(full, full, rule); more {
		t.Error("more runs asked beyond max")
	}
}

// TestNeedMorePaired: a comparison whose runs drift together round by round meets the target
// paired while the unpaired detectable effect, on the same runs, asks for more; a comparison
// with fewer than 2 rounds in common asks for more; max ends it either way.
func TestNeedMorePaired(t *testing.T) {
	rule := AdaptiveRule{Min: 3, Max: 10, TargetEffect: 0.03}
	base := map[int]float64{1: 100, 2: 80, 3: 120, 4: 90}
	cand := map[int]float64{1: 101, 2: 80.5, 3: 121, 4: 90.6}
	pairs := PairByRound(base, cand)
	samples := []float64{cand[1], cand[2], cand[3], cand[4]}
	if more, why := NeedMorePaired(samples, pairs, rule); more {
		t.Errorf("ratios within 1 %% of each other do not meet a 3 %% target paired: %s", why)
	} else if !strings.Contains(why, "paired detectable effect") {
		t.Errorf("the reason does not say the effect is paired: %s", why)
	}
	if more, why := NeedMoreVs([]float64{base[1], base[2], base[3], base[4]}, samples, rule); !more {
		t.Errorf("±15 %% drift unpaired meets a 3 %% target: %s", why)
	}
	if more, why := NeedMorePaired(samples, pairs[:1], rule); !more || !strings.Contains(why, "fewer than 2 rounds") {
		t.Errorf("one round in common: more %v, %s", more, why)
	}
	full := make([]float64, 10)
	if more, _ := NeedMorePaired(full, nil, rule); more {
		t.Error("more runs asked beyond max")
	}
}

// TestPairByRound: rounds in order, a round missing from either side dropped.
func TestPairByRound(t *testing.T) {
	got := PairByRound(map[int]float64{3: 30, 1: 10, 2: 20}, map[int]float64{2: 2, 3: 3, 4: 4})
	want := [][2]float64{{20, 2}, {30, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PairByRound = %v, want %v", got, want)
	}
}
