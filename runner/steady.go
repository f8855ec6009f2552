package runner

import (
	"fmt"
	"time"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
	"github.com/boxbench/boxbench/workload"
)

// The steady-state cut's metrics and warning code (docs/precision.md).
const (
	MetricTruncated   = results.MetricTruncated
	MetricUntruncated = results.MetricUntruncated
	WarnNotSteady     = "steady_state_not_reached"
	steadyStateOff    = "off"
)

// steadyState moves the start of the measured window to where the run's throughput per
// interval has settled (MSER, stats.MSERTruncation), unless the spec turns it off. The cut,
// and the throughput before it, are stored as metrics; what was done is the run's Steady, and
// its fact steady_state says it in words.
func (r *Runner) steadyState(res *workload.Result, rec *results.RunRecord) {
	if r.cfg.Spec.SteadyState == steadyStateOff {
		rec.Steady = results.SteadyOff
		rec.Facts["steady_state"] = "off (steadyState: off): the measured window starts after the warm-up"
		return
	}
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	before := res.Throughput()
	starts, rates := res.MeasuredSeries()
	batch := stats.MSERBatch(len(rates))
	if batch == 0 {
		rec.Steady = results.SteadyTooShort
		rec.Facts["steady_state"] = fmt.Sprintf("not applied: %d measured intervals, MSER-5 needs %d or more (lengthen duration)", len(rates), stats.MinMSERIntervals)
		return
	}
	m, ok := stats.MSERTruncation(rates, batch)
	if !ok {
		rec.Steady = results.SteadyNoMinimum
		rec.Facts["steady_state"] = fmt.Sprintf("not applied: %d measured intervals in batches of %d", len(rates), batch)
		return
	}
	res.Metrics[MetricUntruncated] = before
	res.Metrics[MetricTruncated] = 0
	desc := fmt.Sprintf("MSER-%d over %d intervals", batch, len(rates))
	if !m.Stable {
		rec.Warnings = append(rec.Warnings, results.Warning{Code: WarnNotSteady, Severity: "warning",
			Message: fmt.Sprintf("%s: the throughput had not settled within the first half of the measured window (a trend or a long transient); the second half is what is reported — lengthen warmup or duration", desc)})
	}
	if m.Truncate == 0 {
		rec.Steady = results.SteadySteady
		rec.Facts["steady_state"] = desc + ": steady from the start of the window, nothing cut"
		return
	}
	cut := starts[m.Truncate]
	oldMeasured := res.Measured
	if err := res.Truncate(cut); err != nil {
		delete(res.Metrics, MetricTruncated)
		delete(res.Metrics, MetricUntruncated)
		rec.Steady = results.SteadyCutFailed
		rec.Facts["steady_state"] = fmt.Sprintf("%s would cut %d intervals, not applied: %v", desc, m.Truncate, err)
		return
	}
	truncated := oldMeasured - res.Measured
	res.Metrics[MetricTruncated] = truncated.Seconds()
	if _, ok := res.Metrics["throughput_ops_per_second"]; ok && res.Measured > 0 {
		var ops int64
		for _, o := range res.Ops {
			if o.Series == "latency" {
				ops += o.Count + o.Errors
			}
		}
		res.Metrics["operations_total"] = float64(ops)
		res.Metrics["throughput_ops_per_second"] = float64(ops) / res.Measured.Seconds()
	}
	rec.Steady = results.SteadyCut
	rec.Facts["steady_state"] = fmt.Sprintf("%s: the first %s of the measured window cut as transient (throughput %.0f ops/s before the cut, %.0f after)",
		desc, truncated.Round(time.Millisecond), before, res.Throughput())
}
