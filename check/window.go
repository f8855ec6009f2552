package check

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/boxbench/boxbench/telemetry"
)

// point is one sample value with the length of its interval (0 when unknown: the first sample
// of a series).
type point struct {
	v  float64
	dt float64
}

// window returns, per label, the samples of one source and metric whose whole interval lies
// at or after from. A sample's interval starts at the previous sample of its series; the first
// sample of a series counts only when from <= 0, since its start is unknown.
func window(ss []telemetry.Sample, source, metric string, from time.Duration) map[string][]point {
	var sel []telemetry.Sample
	for _, s := range ss {
		if s.Source == source && s.Metric == metric {
			sel = append(sel, s)
		}
	}
	slices.SortStableFunc(sel, func(a, b telemetry.Sample) int {
		return cmp.Or(cmp.Compare(a.Label, b.Label), cmp.Compare(a.T, b.T))
	})
	out := map[string][]point{}
	for i, s := range sel {
		first := i == 0 || sel[i-1].Label != s.Label
		switch {
		case first && from <= 0:
			out[s.Label] = append(out[s.Label], point{v: s.Value})
		case !first && sel[i-1].T >= from:
			out[s.Label] = append(out[s.Label], point{v: s.Value, dt: (s.T - sel[i-1].T).Seconds()})
		}
	}
	return out
}

// total sums per-interval values over all labels.
func total(w map[string][]point) (float64, bool) {
	var sum float64
	n := 0
	for _, ps := range w {
		for _, p := range ps {
			sum += p.v
			n++
		}
	}
	return sum, n > 0
}

// meanRate is the time-weighted mean of a rate, summed over labels (e.g. the read rate of all
// devices). Points of unknown length are used only when no point has a length.
func meanRate(w map[string][]point) (float64, bool) {
	var sum float64
	found := false
	for _, ps := range w {
		var vdt, dt, plain float64
		for _, p := range ps {
			vdt += p.v * p.dt
			dt += p.dt
			plain += p.v
		}
		switch {
		case dt > 0:
			sum += vdt / dt
			found = true
		case len(ps) > 0:
			sum += plain / float64(len(ps))
			found = true
		}
	}
	return sum, found
}

// maxValue is the largest value over all labels.
func maxValue(w map[string][]point) (float64, bool) {
	m, found := math.Inf(-1), false
	for _, ps := range w {
		for _, p := range ps {
			m, found = max(m, p.v), true
		}
	}
	return m, found
}

func pct(r float64) string { return fmt.Sprintf("%.1f %%", 100*r) }
