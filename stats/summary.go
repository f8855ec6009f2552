// Package stats holds the pure statistics behind boxbench's reports: per-cell
// summaries with confidence intervals, the overhead of a cell relative to its
// baseline (ratio with a confidence interval, a rank test and a verdict), the
// decision whether a cell needs more runs, and merging of latency histograms.
//
// Every function is pure: no globals, no clocks, no randomness, so the same
// results always produce the same report. Values are returned unrounded.
//
// Results are meant to be stored and rendered as JSON, and encoding/json
// rejects NaN and ±Inf. No exported field therefore ever holds a non-finite
// value for finite input; a quantity that does not exist for the data (a
// confidence interval from one run, an unbounded ratio interval) is an
// [Interval] with Valid false, together with a note saying why.
package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultConfidence is the confidence level of every interval unless a caller
// asks for another one.
const DefaultConfidence = 0.95

// Interval is a two-sided confidence interval [Lo, Hi].
//
// Valid is false when the interval does not exist for the data (for example
// the CI of a mean from fewer than two runs, or a ratio whose denominator
// cannot be distinguished from zero); Lo and Hi are then 0 and must not be
// shown. A valid interval always has Lo <= Hi.
type Interval struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Valid bool    `json:"valid"`
}

// Contains reports whether x lies in the closed interval. It is false for an
// invalid interval.
func (iv Interval) Contains(x float64) bool {
	return iv.Valid && iv.Lo <= x && x <= iv.Hi
}

// HalfWidth returns (Hi-Lo)/2, or +Inf for an invalid interval so that
// "is the interval narrow enough" checks fail safe.
func (iv Interval) HalfWidth() float64 {
	if !iv.Valid {
		return math.Inf(1)
	}
	return (iv.Hi - iv.Lo) / 2
}

// Summary describes one sample: the values of one metric over the runs of
// one cell, in the metric's own unit.
//
// Contract for small samples (all fields stay finite, JSON-safe):
//   - N == 0: every other field is zero and CI95 is invalid.
//   - N == 1: Mean, Median, Min and Max are the value; SD and CoV are 0 and
//     mean "unknown", not "no spread"; CI95 is invalid.
//   - CoV is 0 when Mean is 0 (it is undefined there).
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"` // mean of the two middle values for even N
	SD     float64 `json:"sd"`     // sample standard deviation (divisor N-1)
	CoV    float64 `json:"cov"`    // SD / Mean, as a fraction (0.02 = 2 %)
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CI95 is the Student-t confidence interval for the mean at
	// DefaultConfidence: Mean ± t(0.975, N-1)·SD/√N. It assumes independent
	// runs and a roughly normal sampling distribution of the mean (true for
	// throughput averaged over many operations). Valid only for N >= 2; it
	// has zero width when all values are equal.
	CI95 Interval `json:"ci95"`
}

// Summarize returns the Summary of xs. xs is not modified. Values must be
// finite; NaN or ±Inf propagate into the result.
func Summarize(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	mean, sd := meanSD(xs)
	s := Summary{
		N:      n,
		Mean:   mean,
		Median: median(sorted),
		SD:     sd,
		Min:    sorted[0],
		Max:    sorted[n-1],
	}
	if mean != 0 {
		s.CoV = sd / mean
	}
	s.CI95 = meanCI(mean, sd, n, DefaultConfidence)
	return s
}

// meanSD returns the mean and the sample standard deviation (divisor n-1,
// 0 for n < 2). Two passes keep it accurate for large values with small
// spread, the usual shape of throughput numbers.
func meanSD(xs []float64) (mean, sd float64) {
	n := len(xs)
	if n == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return mean, 0
	}
	var ss, comp float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
		comp += d
	}
	// Corrected two-pass formula (Chan, Golub & LeVeque): comp is the
	// rounding error left in the mean.
	ss -= comp * comp / float64(n)
	return mean, math.Sqrt(math.Max(ss, 0) / float64(n-1))
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// meanCI is the Student-t interval for the mean at the given confidence.
func meanCI(mean, sd float64, n int, confidence float64) Interval {
	if n < 2 {
		return Interval{}
	}
	h := tQuantile(1-(1-confidence)/2, float64(n-1)) * sd / math.Sqrt(float64(n))
	return Interval{Lo: mean - h, Hi: mean + h, Valid: true}
}

// tQuantile is the p-quantile of Student's t with df degrees of freedom
// (df may be fractional, as Welch–Satterthwaite produces).
func tQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// AdaptiveRule decides how many runs a cell gets: at least Min, at most Max,
// and in between as many as it takes for the 95 % CI of the mean to be
// narrow enough relative to the mean.
type AdaptiveRule struct {
	Min int `json:"min"`
	Max int `json:"max"`
	// TargetCIHalfWidth is the wanted half-width of the 95 % CI of the mean,
	// relative to the mean: 0.02 stops once the CI is mean ± 2 %.
	TargetCIHalfWidth float64 `json:"target_ci_half_width"`
	// TargetEffect is the overhead, as a fraction, each comparison with a baseline must be able
	// to detect (DetectableEffect at α = 0.05 and DefaultPower): 0.03 stops once a 3 % overhead
	// would be detected. Used by NeedMoreVs.
	TargetEffect float64 `json:"target_effect"`
}

// Validate reports every problem with the rule at once. Min must be at
// least 2 (one run has no CI) and Max at least Min.
func (r AdaptiveRule) Validate() error {
	var errs []error
	if r.Min < 2 {
		errs = append(errs, fmt.Errorf("adaptive min %d: must be >= 2, a single run has no confidence interval", r.Min))
	}
	if r.Max < r.Min {
		errs = append(errs, fmt.Errorf("adaptive max %d: must be >= min %d", r.Max, r.Min))
	}
	if !(r.TargetCIHalfWidth > 0 || r.TargetEffect > 0) || math.IsInf(r.TargetCIHalfWidth, 0) || math.IsInf(r.TargetEffect, 0) {
		errs = append(errs, fmt.Errorf("adaptive targets %v (CI half-width) and %v (effect): one must be a positive fraction such as 0.02", r.TargetCIHalfWidth, r.TargetEffect))
	}
	return errors.Join(errs...)
}

// NeedMore reports whether a cell whose runs so far produced samples needs
// another run under rule, and a one-line reason suitable for the log.
//
// More runs are needed while n < Min, or while n < Max and the relative
// half-width of the 95 % CI of the mean, (Hi-Lo)/2/|Mean|, exceeds
// TargetCIHalfWidth. A CI that does not exist (n < 2) or a zero mean counts
// as too wide. Whatever the rule, the answer is false once n >= max(Min,
// Max), so a caller looping on NeedMore always terminates; callers should
// still Validate rules when they read them. Samples are one value per run of
// the metric the rule is about (usually throughput).
func NeedMore(samples []float64, rule AdaptiveRule) (bool, string) {
	n := len(samples)
	if n < rule.Min {
		return true, fmt.Sprintf("n=%d < min=%d", n, rule.Min)
	}
	rel, ok := relHalfWidth(samples)
	width := "no CI (fewer than 2 runs or zero mean)"
	if ok {
		width = fmt.Sprintf("relative CI half-width %.2f%%", rel*100)
	}
	if rule.TargetCIHalfWidth == 0 && rule.TargetEffect > 0 {
		return false, fmt.Sprintf("n=%d: no CI target (the effect target is NeedMoreVs's)", n)
	}
	target := fmt.Sprintf("target %.2f%%", rule.TargetCIHalfWidth*100)
	if ok && rel <= rule.TargetCIHalfWidth {
		return false, fmt.Sprintf("n=%d: %s <= %s", n, width, target)
	}
	if n >= rule.Max {
		return false, fmt.Sprintf("n=%d reached max=%d: %s, %s", n, rule.Max, width, target)
	}
	return true, fmt.Sprintf("n=%d: %s > %s", n, width, target)
}

// relHalfWidth is the half-width of the 95 % CI of the mean divided by
// |mean|; ok is false if the CI does not exist or the mean is zero.
func relHalfWidth(samples []float64) (rel float64, ok bool) {
	s := Summarize(samples)
	if !s.CI95.Valid || s.Mean == 0 {
		return 0, false
	}
	return s.CI95.HalfWidth() / math.Abs(s.Mean), true
}

// NeedMoreVs is NeedMore for a cell compared with a baseline: besides the CI target (when set),
// more runs are needed while n < Max and the comparison's detectable effect exceeds
// TargetEffect. Both cells must be run again for the effect to shrink; the caller adds the
// baseline's runs too.
func NeedMoreVs(baseline, samples []float64, rule AdaptiveRule) (bool, string) {
	return needEffect(samples, rule, "detectable effect", "fewer than 2 runs in a cell", func() (float64, bool) {
		return DetectableEffect(Summarize(baseline), Summarize(samples), DefaultAlpha, DefaultPower)
	})
}

// NeedMorePaired is NeedMoreVs for a comparison paired by round (a spec's pairing: rounds): the
// detectable effect is the paired design's (PairedRatio's MDEPct, the one its verdict is given
// with) over pairs, the (baseline, candidate) values of the rounds in which both ran ok
// (PairByRound).
func NeedMorePaired(samples []float64, pairs [][2]float64, rule AdaptiveRule) (bool, string) {
	return needEffect(samples, rule, "paired detectable effect", "fewer than 2 rounds with both cells ok", func() (float64, bool) {
		p, err := PairedRatio(pairs, true, DefaultAlpha, DefaultPower)
		return p.MDEPct, err == nil
	})
}

// needEffect is NeedMoreVs's and NeedMorePaired's decision, given how the comparison's
// detectable effect is computed (effect; ok false while it cannot be, for the reason missing).
func needEffect(samples []float64, rule AdaptiveRule, what, missing string, effect func() (float64, bool)) (bool, string) {
	more, why := NeedMore(samples, rule)
	if more || rule.TargetEffect == 0 || len(samples) >= rule.Max {
		return more, why
	}
	mde, ok := effect()
	target := fmt.Sprintf("target effect %.2f%%", rule.TargetEffect*100)
	switch {
	case !ok:
		return true, fmt.Sprintf("n=%d: no %s yet (%s), %s", len(samples), what, missing, target)
	case mde/100 > rule.TargetEffect:
		return true, fmt.Sprintf("n=%d: %s %.2f%% > %s", len(samples), what, mde, target)
	}
	return false, fmt.Sprintf("n=%d: %s %.2f%% <= %s", len(samples), what, mde, target)
}

// PairByRound pairs a candidate's values with its baseline's of the same round (the maps' keys:
// round numbers), in round order; a round missing from either drops out.
func PairByRound(baseline, candidate map[int]float64) [][2]float64 {
	rounds := make([]int, 0, len(candidate))
	for r := range candidate {
		if _, ok := baseline[r]; ok {
			rounds = append(rounds, r)
		}
	}
	slices.Sort(rounds)
	out := make([][2]float64, len(rounds))
	for i, r := range rounds {
		out[i] = [2]float64{baseline[r], candidate[r]}
	}
	return out
}
