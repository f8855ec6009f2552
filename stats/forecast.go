package stats

import "math"

// A forecast answers, before an experiment runs, what it can resolve on this host: from the
// noise floor a calibration measured (the 95 % CI half-width of an A/A ratio at n runs per
// cell, report.Calibration), the run-to-run spread it implies, then the detectable effect at
// any other n and the n a target effect needs. It assumes the spread does not depend on n and
// that the cells compared are as noisy as the calibration's (the same host, equally loaded).

// Spread is the run-to-run spread behind an A/A noise floor of halfPct (percent) at n runs per
// cell: unpaired, the coefficient of variation of one cell's runs (half-width ≈ t·CoV·√(2/n),
// df = 2n−2, the Welch interval of two equally noisy cells); paired, the standard deviation of
// the log per-round ratio (half-width ≈ t·sd/√n, df = n−1; stats.PairedRatio). ok is false
// for n < 2 or a half-width that is not positive.
func Spread(halfPct float64, n int, paired bool) (spread float64, ok bool) {
	if n < 2 || !(halfPct > 0) {
		return 0, false
	}
	t := tQuantile(0.975, forecastDF(n, paired))
	if paired {
		// exp(t·se) − 1 = half-width: the paired interval is symmetric on the log scale.
		return math.Log1p(halfPct/100) * math.Sqrt(float64(n)) / t, true
	}
	return halfPct / 100 / (t * math.Sqrt(2/float64(n))), true
}

// DetectableAt is the detectable effect (percent, as DetectableEffect and Paired.MDEPct) at n
// runs per cell (paired: n rounds) for the spread Spread returned.
func DetectableAt(spread float64, n int, paired bool, alpha, power float64) float64 {
	if n < 2 {
		return math.Inf(1)
	}
	df := forecastDF(n, paired)
	k := tQuantile(1-alpha/2, df) + tQuantile(power, df)
	if paired {
		return 100 * (math.Exp(k*spread/math.Sqrt(float64(n))) - 1)
	}
	return 100 * k * spread * math.Sqrt(2/float64(n))
}

// MaxForecastRuns bounds the runs per cell a forecast looks for (RunsFor's max at its callers).
const MaxForecastRuns = 1000

// RunsFor is the fewest runs per cell (2..max) whose detectable effect is at most targetPct;
// ok is false when even max runs do not reach it.
func RunsFor(spread, targetPct float64, paired bool, alpha, power float64, max int) (n int, ok bool) {
	for n = 2; n <= max; n++ {
		if DetectableAt(spread, n, paired, alpha, power) <= targetPct {
			return n, true
		}
	}
	return max, false
}

func forecastDF(n int, paired bool) float64 {
	if paired {
		return float64(n - 1)
	}
	return float64(2*n - 2)
}

// SpreadFromMDE is the run-to-run spread behind a comparison's detectable effect of mdePct
// (percent, at alpha and power) at n runs per cell (paired: n rounds): DetectableAt inverted,
// so that a finished comparison forecasts its own design at other run counts. ok is false for
// n < 2 or a detectable effect that is not positive.
func SpreadFromMDE(mdePct float64, n int, paired bool, alpha, power float64) (spread float64, ok bool) {
	if n < 2 || !(mdePct > 0) || math.IsInf(mdePct, 0) {
		return 0, false
	}
	df := forecastDF(n, paired)
	k := tQuantile(1-alpha/2, df) + tQuantile(power, df)
	if paired {
		return math.Log1p(mdePct/100) * math.Sqrt(float64(n)) / k, true
	}
	return mdePct / 100 / (k * math.Sqrt(2/float64(n))), true
}
