package report

import (
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

// LatencySeries is the series a report's latency comes from: measured from the intended start
// of each operation (coordinated omission corrected in open loop; equal to service time in
// closed loop).
const LatencySeries = "latency"

// MaxNines is the right end of latency spectra: 99.99 %.
const MaxNines = 4.0

// spectrumStep is the spacing of spectrum points on the nines axis.
const spectrumStep = 0.05

// latencies merges the ok runs' histograms per op type. broken counts histograms that could
// not be decoded; their runs are left out of that op's merged percentiles.
func latencies(ok []results.RunRow) (out []OpLatency, broken int) {
	type acc struct {
		hists         [][]byte
		errs          int64
		p50, p95, p99 []float64
	}
	by := map[string]*acc{}
	for _, run := range ok {
		for _, o := range run.Ops {
			if o.Series != LatencySeries {
				continue
			}
			a := by[o.Op]
			if a == nil {
				a = &acc{}
				by[o.Op] = a
			}
			a.errs += o.Errors
			if o.Count > 0 {
				a.p50 = append(a.p50, micros(o.P50))
				a.p95 = append(a.p95, micros(o.P95))
				a.p99 = append(a.p99, micros(o.P99))
			}
			if len(o.Hist) == 0 {
				if o.Count > 0 {
					broken++
				}
				continue
			}
			if _, err := hdrhistogram.Decode(o.Hist); err != nil {
				broken++
				continue
			}
			a.hists = append(a.hists, o.Hist)
		}
	}
	ops := make([]string, 0, len(by))
	for op := range by {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	for _, op := range ops {
		a := by[op]
		l := OpLatency{Op: op, Errors: a.errs, RunP50: stats.Summarize(a.p50),
			RunP95: stats.Summarize(a.p95), RunP99: stats.Summarize(a.p99)}
		if len(a.hists) > 0 {
			h, err := stats.MergeHistograms(a.hists)
			if err == nil && h.TotalCount() > 0 {
				fillPercentiles(&l, h)
			}
		}
		out = append(out, l)
	}
	return out, broken
}

func fillPercentiles(l *OpLatency, h *hdrhistogram.Histogram) {
	l.Count = h.TotalCount()
	v, err := stats.Percentiles(h, 50, 90, 95, 99, 99.9)
	if err != nil {
		return
	}
	l.P50, l.P90, l.P95, l.P99, l.P999 = micros(v[0]), micros(v[1]), micros(v[2]), micros(v[3]), micros(v[4])
	l.Max = micros(h.Max())
	l.Spectrum = spectrum(h)
}

// spectrum samples h on the nines axis from 0 to the deepest percentile its count supports
// (one operation beyond it), capped at MaxNines.
func spectrum(h *hdrhistogram.Histogram) []Quantile {
	top := min(MaxNines, math.Log10(float64(h.TotalCount())))
	var ps []float64
	for i := 0; ; i++ {
		x := float64(i) * spectrumStep
		if x > top+1e-9 {
			break
		}
		ps = append(ps, percentileOfNines(x))
	}
	if len(ps) == 0 {
		ps = []float64{0}
	}
	vs, err := stats.Percentiles(h, ps...)
	if err != nil {
		return nil
	}
	out := make([]Quantile, len(ps))
	for i := range ps {
		out[i] = Quantile{Percentile: ps[i], Micros: micros(vs[i])}
	}
	return out
}

// nines maps a percentile to the nines axis: 90 → 1, 99 → 2, 99.9 → 3.
func nines(p float64) float64 { return -math.Log10(1 - p/100) }

// percentileOfNines is the inverse of nines.
func percentileOfNines(x float64) float64 { return 100 * (1 - math.Pow(10, -x)) }

func micros(ns int64) float64 { return float64(ns) / 1e3 }
