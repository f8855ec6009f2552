package stats

import (
	"fmt"
	"math"
)

// DefaultPower is the power the detectable effect is computed at.
const DefaultPower = 0.8

// DetectableEffect is the smallest true difference of the means, in percent of the baseline
// mean, that a two-sided Welch t test at level alpha detects with probability power, given the
// run counts and the spread observed in both cells:
//
//	MDE = (t(1−α/2, df) + t(power, df)) · sqrt(sb²/nb + sc²/nc) / mean(baseline) · 100
//
// with the Welch–Satterthwaite df (the usual normal-approximation formula with Student's t in
// place of z, which keeps it honest at 3–10 runs). It answers "what could this comparison have
// seen": a "no difference" verdict only rules out differences larger than it. ok is false with
// fewer than 2 runs in a cell or a baseline mean that is not positive.
func DetectableEffect(baseline, candidate Summary, alpha, power float64) (pct float64, ok bool) {
	if baseline.N < 2 || candidate.N < 2 || !(baseline.Mean > 0) {
		return 0, false
	}
	vb := baseline.SD * baseline.SD / float64(baseline.N)
	vc := candidate.SD * candidate.SD / float64(candidate.N)
	if vb+vc == 0 {
		return 0, true
	}
	df := welchDF(vb, vc, baseline.N-1, candidate.N-1)
	d := (tQuantile(1-alpha/2, df) + tQuantile(power, df)) * math.Sqrt(vb+vc)
	return 100 * d / baseline.Mean, true
}

// Paired is the ratio of a candidate to its baseline analysed by rounds: runs are interleaved in
// randomised rounds (blocks), and a round's two runs share whatever drift the host had then.
// The per-round ratios are averaged on the log scale (a geometric mean), with a Student t
// interval over the rounds.
type Paired struct {
	N             int      `json:"n"` // rounds with an ok run of both cells
	Ratio         float64  `json:"ratio"`
	RatioCI       Interval `json:"ratio_ci"`
	OverheadPct   float64  `json:"overhead_pct"`
	OverheadPctCI Interval `json:"overhead_pct_ci"`
	// MDEPct is the detectable effect of the paired design at the same alpha and power.
	MDEPct float64 `json:"mde_pct"`
	// Rounds are the per-round ratios in round order (the drift over the experiment).
	Rounds []float64 `json:"rounds"`
}

// PairedRatio analyses pairs (baseline, candidate) of runs from the same rounds. It needs 2
// pairs or more, every value positive.
func PairedRatio(pairs [][2]float64, higherIsBetter bool, alpha, power float64) (Paired, error) {
	if len(pairs) < 2 {
		return Paired{}, fmt.Errorf("paired analysis needs 2 rounds or more, have %d", len(pairs))
	}
	logs := make([]float64, len(pairs))
	p := Paired{N: len(pairs), Rounds: make([]float64, len(pairs))}
	for i, pr := range pairs {
		if !(pr[0] > 0) || !(pr[1] > 0) || math.IsInf(pr[0], 0) || math.IsInf(pr[1], 0) {
			return Paired{}, fmt.Errorf("round %d: values %v and %v must be positive and finite", i+1, pr[0], pr[1])
		}
		p.Rounds[i] = pr[1] / pr[0]
		logs[i] = math.Log(p.Rounds[i])
	}
	mean, sd := meanSD(logs)
	df := float64(len(logs) - 1)
	se := sd / math.Sqrt(float64(len(logs)))
	t := tQuantile(1-alpha/2, df)
	p.Ratio = math.Exp(mean)
	p.RatioCI = Interval{Lo: math.Exp(mean - t*se), Hi: math.Exp(mean + t*se), Valid: true}
	p.OverheadPct = OverheadPct(p.Ratio, higherIsBetter)
	lo, hi := OverheadPct(p.RatioCI.Lo, higherIsBetter), OverheadPct(p.RatioCI.Hi, higherIsBetter)
	p.OverheadPctCI = Interval{Lo: math.Min(lo, hi), Hi: math.Max(lo, hi), Valid: true}
	// On the log scale a difference d is a ratio exp(d): as a percentage, 100·(exp(d)−1).
	p.MDEPct = 100 * (math.Exp((t+tQuantile(power, df))*se) - 1)
	return p, nil
}

// Verdict is the paired design's own verdict: a difference when the ratio's interval excludes 1.
func (p Paired) Verdict(higherIsBetter bool) Verdict {
	switch {
	case !p.RatioCI.Valid || p.RatioCI.Contains(1):
		return VerdictNoDifference
	case (p.RatioCI.Lo > 1) == higherIsBetter:
		return VerdictFaster
	}
	return VerdictSlower
}
