package workload

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// MeasuredSeries returns the measured window's throughput per interval, in time order: the
// successful operations of every "latency" interval that starts at the same offset, divided by
// the interval's length (ops/s), with the intervals' start offsets. Warm-up intervals are left
// out.
func (r *Result) MeasuredSeries() (starts []time.Duration, rates []float64) {
	secondary := map[string]bool{}
	for _, o := range r.Ops {
		if o.Secondary {
			secondary[o.Op] = true
		}
	}
	sum := map[time.Duration]float64{}
	length := map[time.Duration]time.Duration{}
	for _, iv := range r.Intervals {
		if iv.Phase != PhaseMeasure || iv.Series != "latency" || secondary[iv.Op] || iv.End <= iv.Start {
			continue
		}
		if _, ok := sum[iv.Start]; !ok {
			starts = append(starts, iv.Start)
		}
		sum[iv.Start] += float64(iv.Count)
		length[iv.Start] = iv.End - iv.Start
	}
	slices.Sort(starts)
	for _, s := range starts {
		rates = append(rates, sum[s]/length[s].Seconds())
	}
	return starts, rates
}

// ErrNoHistograms is returned by Truncate when the measured intervals carry no latency
// histograms (sysbench reports only rates per interval, fio one interval for the whole window):
// the summaries cannot be recomputed for a shorter window.
var ErrNoHistograms = errors.New("the workload's intervals carry no latency histograms")

// Truncate moves the start of the measured window to the offset from (an interval boundary):
// measured intervals that start before it become warm-up, and every operation summary is
// recomputed from the histograms of the intervals that remain (counts, errors, throughput over
// the shorter window, percentiles, mean). Result.Errors and the client's CPU keep the whole
// window. It fails, changing nothing, when an interval lacks its histogram.
func (r *Result) Truncate(from time.Duration) error {
	type key struct{ op, series string }
	type acc struct {
		h      *hdrhistogram.Histogram
		count  int64
		errors int64
	}
	accs := map[key]*acc{}
	var first, last time.Duration = -1, 0
	for _, iv := range r.Intervals {
		if iv.Phase != PhaseMeasure || iv.Start < from {
			continue
		}
		if first < 0 || iv.Start < first {
			first = iv.Start
		}
		last = max(last, iv.End)
		if iv.Series != "latency" && iv.Series != "service" {
			continue // error series: counted through Errors
		}
		if len(iv.Hist) == 0 {
			return ErrNoHistograms
		}
		h, err := hdrhistogram.Decode(iv.Hist)
		if err != nil {
			return fmt.Errorf("decode the histogram of %s/%s at %s: %w", iv.Op, iv.Series, iv.Start, err)
		}
		k := key{iv.Op, iv.Series}
		a := accs[k]
		if a == nil {
			a = &acc{h: h}
			accs[k] = a
		} else {
			a.h.Merge(h)
		}
		a.count += iv.Count
		a.errors += iv.Errors
	}
	if first < 0 {
		return fmt.Errorf("no measured interval starts at or after %s", from)
	}
	measured := last - first
	ops := make([]OpSummary, 0, len(r.Ops))
	for _, o := range r.Ops {
		a := accs[key{o.Op, o.Series}]
		if a == nil {
			return fmt.Errorf("operation %s/%s has no interval after %s", o.Op, o.Series, from)
		}
		n := OpSummary{Op: o.Op, Series: o.Series, Count: a.count, Errors: a.errors, Secondary: o.Secondary}
		if measured > 0 {
			n.Throughput = float64(n.Count) / measured.Seconds()
		}
		if err := n.FillFromHistogram(a.h); err != nil {
			return err
		}
		if a.h.TotalCount() > 0 {
			n.Mean = a.h.Mean()
		}
		ops = append(ops, n)
	}
	for i := range r.Intervals {
		if r.Intervals[i].Phase == PhaseMeasure && r.Intervals[i].Start < from {
			r.Intervals[i].Phase = PhaseWarmup
		}
	}
	r.Warmup += r.Measured - measured
	r.Measured = measured
	r.Ops = ops
	return nil
}
