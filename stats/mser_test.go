package stats

import (
	"math/rand/v2"
	"testing"
)

// noisy returns n observations around level with a deterministic ±spread noise.
func noisy(n int, level, spread float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = level + spread*(2*rng.Float64()-1)
	}
	return out
}

func TestMSERDetectsWarmupRamp(t *testing.T) {
	// 30 one-second intervals: throughput climbs from 40 % to full over the first 8 (a cold
	// cache, a JIT, a CPU frequency ramp), then holds at 50 000 ± 2 %.
	s := noisy(30, 50000, 1000, 7)
	for i := 0; i < 8; i++ {
		s[i] = 50000 * (0.4 + 0.6*float64(i)/8)
	}
	m, ok := MSERTruncation(s, 5)
	if !ok {
		t.Fatalf("MSER-5 on a ramp: %+v ok=%v", m, ok)
	}
	// The ramp lasts 8 intervals: batches of 5 must drop at least the first two batches (10
	// intervals, the smallest multiple of 5 that removes it), and never more than half.
	if m.Truncate < 10 || m.Truncate > 15 {
		t.Errorf("MSER-5 truncates %d intervals, want 10–15 (the ramp is the first 8)", m.Truncate)
	}
	m1, _ := MSERTruncation(s, 1)
	if m1.Truncate < 6 || m1.Truncate > 15 {
		t.Errorf("MSER-1 truncates %d intervals, want 6–15 (the ramp is the first 8, its last steps near full rate)", m1.Truncate)
	}
	// A 60-interval run with the same ramp: the ramp is cut whatever else MSER takes with it
	// (here it takes more: batches 2–5 happen to be noisier than the rest).
	long := noisy(60, 50000, 1000, 9)
	copy(long, s[:8])
	if m, _ := MSERTruncation(long, 5); m.Truncate < 10 || m.Truncate > 30 {
		t.Errorf("60 intervals, ramp of 8: %+v, want Truncate 10–30", m)
	}
}

func TestMSERLeavesFlatSeries(t *testing.T) {
	flat := make([]float64, 30)
	for i := range flat {
		flat[i] = 42000
	}
	if m, ok := MSERTruncation(flat, 5); !ok || m.Truncate != 0 || !m.Stable {
		t.Errorf("constant series: %+v ok=%v, want no truncation", m, ok)
	}
	// Stationary noise: over many series MSER-5 keeps the whole window in nearly all (a cut
	// of stationary data costs power, not bias, but it is not what the rule is for).
	cut, dropped := 0, 0
	for seed := uint64(0); seed < 200; seed++ {
		m, _ := MSERTruncation(noisy(30, 42000, 2000, seed), 5)
		if m.Truncate > 0 {
			cut++
		}
		dropped += m.Truncate
	}
	if cut > 20 {
		t.Errorf("flat noisy series truncated in %d of 200 cases; want 10 %% or fewer", cut)
	}
	if frac := float64(dropped) / (200 * 30); frac > 0.05 {
		t.Errorf("flat noisy series: %.1f %% of the intervals dropped on average; want under 5 %%", 100*frac)
	}
}

func TestMSERTrendIsNotStable(t *testing.T) {
	// A series that keeps falling (a leak, a filling cache) never settles: the cut runs into
	// the limit of half the window, and MSER must say it is not a steady state.
	s := make([]float64, 30)
	for i := range s {
		s[i] = 50000 - 1000*float64(i)*float64(i)/30
	}
	m, ok := MSERTruncation(s, 5)
	if !ok || m.Stable || m.Truncate != 15 {
		t.Errorf("falling series: %+v ok=%v, want Stable=false at the limit (Truncate 15)", m, ok)
	}
}

func TestMSERTooShort(t *testing.T) {
	if _, ok := MSERTruncation([]float64{1, 2, 3}, 5); ok {
		t.Error("3 observations in batches of 5: ok=true, want false")
	}
	for n, want := range map[int]int{3: 0, 5: 0, 19: 0, 20: 5, 60: 5} {
		if got := MSERBatch(n); got != want {
			t.Errorf("MSERBatch(%d) = %d, want %d", n, got, want)
		}
	}
}
