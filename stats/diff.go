package stats

import "math"

// DiffCI is Welch's confidence interval for the difference of two means,
// mean(candidate) − mean(baseline), from the two samples' summaries:
//
//	(x̄c − x̄b) ± t · √(sc²/nc + sb²/nb)
//
// with t the (1+confidence)/2 quantile of Student's t on the
// Welch–Satterthwaite degrees of freedom. It does not assume equal variances,
// so a cell whose runs spread more than its baseline's is not given a
// narrower interval than it has. It needs N >= 2 in both samples (an invalid
// interval and a note otherwise); when neither sample has spread the interval
// is the point difference, with a note.
func DiffCI(baseline, candidate Summary, confidence float64) (iv Interval, note string) {
	if baseline.N < 2 || candidate.N < 2 {
		return Interval{}, "difference CI needs at least 2 runs in each cell"
	}
	d := candidate.Mean - baseline.Mean
	vb := baseline.SD * baseline.SD / float64(baseline.N)
	vc := candidate.SD * candidate.SD / float64(candidate.N)
	if vb == 0 && vc == 0 {
		return Interval{Lo: d, Hi: d, Valid: true}, "no spread in either cell; the difference CI has zero width"
	}
	t := tQuantile(1-(1-confidence)/2, welchDF(vc, vb, candidate.N-1, baseline.N-1))
	h := t * math.Sqrt(vc+vb)
	return Interval{Lo: d - h, Hi: d + h, Valid: true}, ""
}
