package stats

import (
	"errors"
	"fmt"
	"math"
)

// DefaultAlpha is the significance level used when CompareOptions.Alpha is 0.
const DefaultAlpha = 0.05

// ErrBaselineNotPositive is returned by Compare when the baseline mean is
// zero or negative, so the ratio would be infinite or meaningless.
var ErrBaselineNotPositive = errors.New("baseline mean is not positive")

// CompareOptions configures Compare. The zero value means lower is better
// (latency) at alpha 0.05; throughput comparisons must set HigherIsBetter.
type CompareOptions struct {
	// HigherIsBetter is true for throughput-like metrics and false for
	// latency-like ones. It decides which direction is "faster".
	HigherIsBetter bool
	// Alpha is the significance level of the rank test; 0 means DefaultAlpha.
	// The ratio CI is computed at confidence 1-Alpha so that both criteria of
	// a verdict are at the same level.
	Alpha float64
}

// Validate reports an Alpha outside (0, 0.5].
func (o CompareOptions) Validate() error {
	if o.Alpha != 0 && !(o.Alpha > 0 && o.Alpha <= 0.5) {
		return fmt.Errorf("alpha %v outside (0, 0.5]", o.Alpha)
	}
	return nil
}

// Verdict is the outcome of a comparison, from the candidate's point of view:
// "faster" means the candidate is better than the baseline on this metric
// (higher throughput or lower latency).
type Verdict string

// The verdicts.
const (
	VerdictFaster       Verdict = "faster"
	VerdictSlower       Verdict = "slower"
	VerdictNoDifference Verdict = "no significant difference"
)

// Comparison is the overhead of a candidate cell relative to its baseline on
// one metric. All fields are finite, so it encodes to JSON as is.
type Comparison struct {
	Baseline       Summary `json:"baseline"`
	Candidate      Summary `json:"candidate"`
	HigherIsBetter bool    `json:"higher_is_better"`
	Alpha          float64 `json:"alpha"`
	Confidence     float64 `json:"confidence"` // level of RatioCI and OverheadPctCI: 1-Alpha

	// Ratio is mean(candidate)/mean(baseline), the ratio of the arithmetic
	// means (not the mean or median of per-run ratios): for throughput over
	// runs of equal length it is the ratio of total work done.
	Ratio float64 `json:"ratio"`
	// RatioCI is the Fieller–Welch interval for Ratio (see RatioCI).
	RatioCI Interval `json:"ratio_ci"`
	// OverheadPct is the cost of the candidate in percent of the baseline:
	// positive is worse. (1-Ratio)·100 if HigherIsBetter, (Ratio-1)·100
	// otherwise. OverheadPctCI is RatioCI mapped the same way.
	OverheadPct   float64  `json:"overhead_pct"`
	OverheadPctCI Interval `json:"overhead_pct_ci"`

	// UTest is the two-sided Mann–Whitney test, U of the candidate.
	UTest UTest `json:"utest"`
	// Underpowered is true when UTest.MinP >= Alpha: with these run counts
	// no data could be significant, so "no significant difference" means
	// "too few runs", and the report must say so. Notes holds the advice.
	Underpowered bool `json:"underpowered"`

	// MDEPct is the smallest overhead (in percent of the baseline) these runs could have
	// detected at Alpha with DefaultPower (DetectableEffect); with no verdict it is what the
	// comparison rules out: "no difference larger than MDEPct %". MDEValid is false with fewer
	// than 2 runs in a cell.
	MDEPct   float64 `json:"mde_pct"`
	MDEValid bool    `json:"mde_valid"`

	// Verdict is faster/slower only if UTest.P < Alpha, RatioCI is valid and
	// excludes 1, and both agree on the direction.
	Verdict Verdict  `json:"verdict"`
	Notes   []string `json:"notes,omitempty"`
}

// OverheadPct converts a ratio candidate/baseline into the candidate's cost
// in percent: (1-ratio)·100 when higher is better, (ratio-1)·100 otherwise.
// 3.1 means "3.1 % worse than the baseline"; negative means better.
func OverheadPct(ratio float64, higherIsBetter bool) float64 {
	if higherIsBetter {
		return (1 - ratio) * 100
	}
	return (ratio - 1) * 100
}

// Compare compares the runs of a candidate cell with the runs of its
// baseline on one metric. Inputs are not modified.
//
// It returns an error if either sample is empty or not finite, if opts is
// invalid, or if the baseline mean is <= 0 (ErrBaselineNotPositive): the
// metrics boxbench compares are non-negative and a ratio to zero is
// infinite. One run per cell is accepted: the ratio is reported, the CI is
// invalid and the verdict is "no significant difference" with notes.
func Compare(baseline, candidate []float64, opts CompareOptions) (Comparison, error) {
	if err := opts.Validate(); err != nil {
		return Comparison{}, fmt.Errorf("compare: %w", err)
	}
	if len(baseline) == 0 || len(candidate) == 0 {
		return Comparison{}, fmt.Errorf("compare: empty sample (baseline n=%d, candidate n=%d)", len(baseline), len(candidate))
	}
	if err := checkFinite(baseline); err != nil {
		return Comparison{}, fmt.Errorf("compare: baseline: %w", err)
	}
	if err := checkFinite(candidate); err != nil {
		return Comparison{}, fmt.Errorf("compare: candidate: %w", err)
	}
	alpha := opts.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	c := Comparison{
		Baseline:       Summarize(baseline),
		Candidate:      Summarize(candidate),
		HigherIsBetter: opts.HigherIsBetter,
		Alpha:          alpha,
		Confidence:     1 - alpha,
	}
	if c.Baseline.Mean <= 0 {
		return Comparison{}, fmt.Errorf("compare: %w (%v)", ErrBaselineNotPositive, c.Baseline.Mean)
	}
	c.Ratio = c.Candidate.Mean / c.Baseline.Mean
	c.OverheadPct = OverheadPct(c.Ratio, opts.HigherIsBetter)
	var note string
	c.RatioCI, note = RatioCI(c.Baseline, c.Candidate, c.Confidence)
	c.addNote(note)
	if c.RatioCI.Valid {
		lo := OverheadPct(c.RatioCI.Lo, opts.HigherIsBetter)
		hi := OverheadPct(c.RatioCI.Hi, opts.HigherIsBetter)
		c.OverheadPctCI = Interval{Lo: math.Min(lo, hi), Hi: math.Max(lo, hi), Valid: true}
	}
	c.MDEPct, c.MDEValid = DetectableEffect(c.Baseline, c.Candidate, alpha, DefaultPower)
	u, err := MannWhitneyU(candidate, baseline)
	if err != nil {
		return Comparison{}, fmt.Errorf("compare: %w", err) // unreachable: inputs checked above
	}
	c.UTest = u
	if u.MinP >= alpha {
		c.Underpowered = true
		c.addNote(fmt.Sprintf("with %d baseline and %d candidate runs the Mann–Whitney test cannot reach p < %g "+
			"(smallest possible p = %.3g); at least %d runs per cell are needed for a verdict",
			len(baseline), len(candidate), alpha, u.MinP, MinRunsForAlpha(alpha)))
	}
	c.Verdict = c.verdict()
	return c, nil
}

// verdict applies the decision rule; it may add a note explaining why two
// criteria disagreed.
func (c *Comparison) verdict() Verdict {
	significant := c.UTest.P < c.Alpha
	excludesOne := c.RatioCI.Valid && !c.RatioCI.Contains(1)
	switch {
	case !significant && !excludesOne:
		return VerdictNoDifference
	case significant != excludesOne:
		if !c.Underpowered {
			c.addNote(fmt.Sprintf("rank test (p = %.3g) and ratio CI (excludes 1: %t) disagree; no verdict", c.UTest.P, excludesOne))
		}
		return VerdictNoDifference
	}
	candidateHigher := c.RatioCI.Lo > 1
	ranksHigher := c.UTest.U > float64(c.Baseline.N*c.Candidate.N)/2
	if candidateHigher != ranksHigher {
		c.addNote("rank test and ratio of means point in opposite directions (outliers?); no verdict")
		return VerdictNoDifference
	}
	if candidateHigher == c.HigherIsBetter {
		return VerdictFaster
	}
	return VerdictSlower
}

func (c *Comparison) addNote(s string) {
	if s != "" {
		c.Notes = append(c.Notes, s)
	}
}

// MinRunsForAlpha returns the smallest number of runs n such that a
// Mann–Whitney test of n against n runs can reach p < alpha (4 for 0.05,
// 5 for 0.01). It returns 0 if alpha <= 0, which no test can reach.
func MinRunsForAlpha(alpha float64) int {
	if !(alpha > 0) {
		return 0
	}
	n := 1
	for MinUTestP(n, n) >= alpha {
		n++
	}
	return n
}

// RatioCI returns a confidence interval for the ratio of means
// θ = mean(candidate)/mean(baseline) of two independent samples, from their
// summaries, by Fieller's method with Welch–Satterthwaite degrees of freedom.
// When the interval does not exist it is invalid and note says why.
//
// Why Fieller and not a bootstrap: boxbench cells have 3–30 runs. At those
// sizes percentile and BCa bootstrap intervals of a mean are too narrow
// (they use the plug-in variance and normal-like quantiles instead of
// Student's t: for 5 vs 5 normal runs both covered about 89 % for a nominal
// 95 % in a scipy simulation), and they need a random seed to be
// reproducible. Fieller's interval is deterministic, exact for normal data
// up to the Welch–Satterthwaite approximation of the degrees of freedom
// (0.949–0.964 coverage from 3 to 10 runs, see TestRatioCICoverage), and it
// says when the ratio is unbounded (a baseline mean that cannot be told
// apart from zero) instead of returning a finite but meaningless interval.
// Run means of throughput are averages of many operations, so their
// sampling distribution is close to normal.
//
// The interval is the set of θ not rejected by the Welch t test of
// mean(candidate) − θ·mean(baseline) = 0:
//
//	(x̄c − θ·x̄b)² <= t² · (vc + θ²·vb),  vc = sc²/nc, vb = sb²/nb,
//
// with t the (1+confidence)/2 quantile of Student's t on the
// Welch–Satterthwaite degrees of freedom of that difference evaluated at the
// point estimate θ̂ (the Fieller–Welch interval of Tamhane & Logan, 2004).
// It needs N >= 2 in both samples. If both samples have zero spread the
// interval is the point estimate.
func RatioCI(baseline, candidate Summary, confidence float64) (iv Interval, note string) {
	if baseline.N < 2 || candidate.N < 2 {
		return Interval{}, "ratio CI needs at least 2 runs in each cell"
	}
	if baseline.Mean == 0 {
		return Interval{}, "baseline mean is zero; the ratio is undefined"
	}
	xb, xc := baseline.Mean, candidate.Mean
	vb := baseline.SD * baseline.SD / float64(baseline.N)
	vc := candidate.SD * candidate.SD / float64(candidate.N)
	theta := xc / xb
	if vb == 0 && vc == 0 {
		return Interval{Lo: theta, Hi: theta, Valid: true}, "no spread in either cell; the ratio CI has zero width"
	}
	df := welchDF(vc, theta*theta*vb, candidate.N-1, baseline.N-1)
	t := tQuantile(1-(1-confidence)/2, df)
	t2 := t * t
	a := xb*xb - t2*vb
	if a <= 0 {
		return Interval{}, "baseline mean is not distinguishable from zero; the ratio CI is unbounded"
	}
	// Roots of a·θ² − 2·xc·xb·θ + (xc² − t²·vc) = 0. The discriminant
	// simplifies to t²·(vc·a + vb·xc²), which is >= 0 whenever a > 0.
	root := math.Sqrt(t2 * (vc*a + vb*xc*xc))
	return Interval{Lo: (xc*xb - root) / a, Hi: (xc*xb + root) / a, Valid: true}, ""
}

// welchDF is the Welch–Satterthwaite degrees of freedom of a sum of two
// independent variance terms with df1 and df2 degrees of freedom. A zero
// term contributes nothing; at least one term must be positive.
func welchDF(v1, v2 float64, df1, df2 int) float64 {
	switch {
	case v1 == 0:
		return float64(df2)
	case v2 == 0:
		return float64(df1)
	}
	s := v1 + v2
	return s * s / (v1*v1/float64(df1) + v2*v2/float64(df2))
}
