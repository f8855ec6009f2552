package stats

import "math"

// MSER is the result of a steady-state truncation of a series (MSERTruncation).
type MSER struct {
	// Batch is the number of observations averaged into one batch mean (5 for MSER-5).
	Batch int `json:"batch"`
	// Truncate is how many leading observations to drop (a multiple of Batch); 0 when the
	// series is steady from its start.
	Truncate int `json:"truncate"`
	// Stable is false when the cut reached the limit of the search, half the series: the
	// series may not have settled within the window (a trend, or a long transient), and the
	// caller must say so.
	Stable bool `json:"stable"`
}

// MSERTruncation applies the MSER-m rule (White, 1997; MSER-5 when batch is 5) to series, e.g.
// a run's throughput per interval: the series is cut into batches of batch observations
// (a trailing incomplete batch is left out of the statistic), and the truncation point d, in
// batches, minimises
//
//	MSER(d) = Σ_{j≥d} (Z_j − Z̄_d)² / (k − d)²
//
// over d = 0 … ⌊k/2⌋, with Z_j the batch means, k their number and Z̄_d the mean of those kept:
// the standard error of the mean of what remains, which drops when a transient is cut off and
// rises when good data is. Ties go to the smallest d, so a flat series is never truncated; and
// a cut is kept only when the dropped batches differ from the kept ones (their mean more than 3
// standard errors away), so that a short stationary series is rarely cut for its noise.
// With fewer than 2 batches nothing is truncated and ok is false.
func MSERTruncation(series []float64, batch int) (m MSER, ok bool) {
	if batch < 1 {
		batch = 1
	}
	k := len(series) / batch
	m = MSER{Batch: batch, Stable: true}
	if k < 2 {
		return m, false
	}
	z := make([]float64, k)
	for j := range z {
		var s float64
		for _, x := range series[j*batch : (j+1)*batch] {
			s += x
		}
		z[j] = s / float64(batch)
	}
	// Only the first half is searched: near the end a handful of batches can have an
	// arbitrarily small statistic, and a window half spent warming up is not a steady state.
	best, bestD := 0.0, -1
	for d := 0; d <= k/2; d++ {
		var mean float64
		for _, x := range z[d:] {
			mean += x
		}
		mean /= float64(k - d)
		var ss float64
		for _, x := range z[d:] {
			ss += (x - mean) * (x - mean)
		}
		stat := ss / float64((k-d)*(k-d))
		// Strictly smaller, with a relative margin against rounding: ties keep the smaller d.
		if bestD < 0 || stat < best*(1-1e-9) {
			best, bestD = stat, d
		}
	}
	m.Stable = bestD < k/2
	if bestD > 0 && !differs(series[:bestD*batch], series[bestD*batch:k*batch]) {
		// On a short noisy series the minimum often lands on a cut of plain noise (the
		// statistic of a few batches is itself noisy). Cut only what differs from the rest:
		// the dropped batches' mean more than 3 standard errors from the kept batches' mean.
		return m, true
	}
	m.Truncate = bestD * batch
	return m, true
}

// differs reports whether the mean of dropped lies more than 3 standard errors of the
// difference away from the mean of kept, with the spread of the kept observations themselves
// (not of batch means: the batches kept were chosen for their small spread, which would make
// any cut look significant; the observations inside them vary regardless).
func differs(dropped, kept []float64) bool {
	md, _ := meanSD(dropped)
	mk, sk := meanSD(kept)
	if sk == 0 {
		return md != mk
	}
	return math.Abs(md-mk) > 3*sk*math.Sqrt(1/float64(len(dropped))+1/float64(len(kept)))
}

// MinMSERIntervals is the shortest series boxbench applies MSER-5 to: 4 batches of 5.
const MinMSERIntervals = 20

// MSERBatch is the batch size boxbench uses for a series of n intervals: 5 (MSER-5, the usual
// choice, which smooths interval-to-interval noise) when that leaves at least 4 batches, else
// 0: no truncation. MSER-1 on shorter series was tried and dropped: on the shared 2-vCPU
// development VM, 10-interval Redis runs cut by MSER-1 had a wider A/A noise floor than uncut
// ones (docs/notebook/precision-log.md) — it cut bursts of other tenants' load, not transients.
func MSERBatch(n int) int {
	if n >= MinMSERIntervals {
		return 5
	}
	return 0
}
