package sysbench

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/boxbench/boxbench/workload"
)

// Op is the operation name of sysbench's events in results: one OLTP transaction (for
// oltp_point_select and oltp_insert, one statement).
const Op = "transaction"

// timing places sysbench's clock on the run's clock.
type timing struct {
	// started is the offset from Clock.Start at which sysbench printed "Threads started!",
	// the origin of its own timer (interval times, "total time").
	started time.Duration
	// cpu is the sysbench process's user+system CPU time over its whole life, life that life's
	// wall-clock length (start to reaped).
	cpu, life time.Duration
}

// result turns a parsed output into the run's Result. It returns what it could build with an
// error when the output lacks the final report (a failed or killed run).
func (c Config) result(out *Output, tm timing) (*workload.Result, error) {
	iv := c.Interval
	warmupS := int(c.Warmup / time.Second)
	res := &workload.Result{Mode: workload.ModeClosed, Threads: c.Threads, Warmup: c.Warmup,
		ClientCPU: tm.cpu, ClientCPUWall: tm.life, Metrics: map[string]float64{}}
	if c.Rate > 0 {
		res.Mode, res.TargetOps = workload.ModeOpen, c.Rate
	}
	queueMax := -1
	for _, x := range out.Intervals {
		end := tm.started + time.Duration(x.Time)*time.Second
		ph := workload.PhaseMeasure
		if x.Time <= warmupS {
			ph = workload.PhaseWarmup
		} else if x.HasQueue && x.QueueLength > queueMax {
			queueMax = x.QueueLength
		}
		// sysbench reports rates with two decimals; counts are rate × interval length.
		res.Intervals = append(res.Intervals, workload.Interval{Start: end - iv, End: end, Phase: ph,
			Op: Op, Series: "latency", Count: int64(math.Round(x.TPS * iv.Seconds())),
			Errors: int64(math.Round(x.ErrPS * iv.Seconds()))})
	}
	f := out.Final
	if f == nil {
		return res, errors.New("sysbench printed no final report")
	}
	measured, warmTx := f.TotalTime, int64(0)
	if c.Warmup > 0 {
		if len(out.Checkpoints) == 0 {
			return res, errors.New("sysbench printed no checkpoint report at the end of the warm-up")
		}
		ck := out.Checkpoints[0]
		measured -= ck.TotalTime
		warmTx = ck.Transactions
		res.Warmup = secs(ck.TotalTime)
	}
	res.Measured = secs(measured)

	h, clamped, err := bucketsToHDR(out.Histogram)
	if err != nil {
		return res, err
	}
	lat := workload.OpSummary{Op: Op, Series: "latency", Count: f.Transactions, Errors: f.IgnoredErrors}
	if measured > 0 {
		lat.Throughput = float64(f.Transactions) / measured
	}
	if f.Events > 0 {
		lat.Mean = f.SumMS * 1e6 / float64(f.Events) // sysbench's exact timer sum, not bucket values
	}
	if err := lat.FillFromHistogram(h); err != nil {
		return res, err
	}
	res.Ops = []workload.OpSummary{lat}
	if res.Mode == workload.ModeClosed {
		// Closed loop: there is no intended start, so service time is the latency (as in
		// workload/ycsb, both series are stored).
		svc := lat
		svc.Series = "service"
		res.Ops = append(res.Ops, svc)
	}
	// Open loop: sysbench only knows latency from the event's enqueue time; the service time
	// alone is not measured, so no "service" series is stored.

	res.Errors = map[string]int64{}
	if f.IgnoredErrors > 0 {
		res.Errors["ignored_error"] = f.IgnoredErrors
	}
	if f.Reconnects > 0 {
		res.Errors["reconnect"] = f.Reconnects
	}
	if len(res.Errors) == 0 {
		res.Errors = nil
	}
	c.metrics(res.Metrics, f, measured, warmTx, tm.cpu)
	if clamped > 0 {
		res.Metrics["clamped_values_total"] = float64(clamped)
	}
	if res.Mode == workload.ModeOpen {
		res.Metrics["target_rate_transactions_per_second"] = c.Rate
		// sysbench 1.0 adds each event's time in its queue to the latency, the queue time
		// counting from when the generator thread enqueued it at its scheduled (Poisson)
		// arrival time: latency from the intended start, coordinated omission corrected.
		res.Metrics["coordinated_omission_corrected_bool"] = 1
		res.Metrics["poisson_arrivals_bool"] = 1
		if queueMax >= 0 {
			res.Metrics["queue_length_max_events"] = float64(queueMax)
		}
	}
	return res, nil
}

func (c Config) metrics(m map[string]float64, f *Summary, measured float64, warmTx int64, cpu time.Duration) {
	per := func(name string, n int64) {
		m[name+"_total"] = float64(n)
		if measured > 0 {
			m[name+"_per_second"] = float64(n) / measured
		}
	}
	per("transactions", f.Transactions)
	per("queries", f.Queries)
	per("read_queries", f.Reads)
	per("write_queries", f.Writes)
	per("other_queries", f.Others)
	per("errors", f.IgnoredErrors)
	per("reconnects", f.Reconnects)
	// sysbench's own latency figures (its timers, 10 µs resolution as printed), kept beside the
	// histogram-derived percentiles of Ops for comparison with published sysbench numbers.
	m["latency_min_reported_ns"] = f.MinMS * 1e6
	m["latency_avg_reported_ns"] = f.AvgMS * 1e6
	m["latency_max_reported_ns"] = f.MaxMS * 1e6
	if f.Percentile > 0 {
		m[fmt.Sprintf("latency_p%d_reported_ns", f.Percentile)] = f.PercentileMS * 1e6
	}
	if f.Unfinished > 0 {
		m["unfinished_transactions_total"] = float64(f.Unfinished)
	}
	if tx := warmTx + f.Transactions; tx > 0 && cpu > 0 {
		m["client_cpu_per_transaction_ns"] = float64(cpu.Nanoseconds()) / float64(tx)
	}
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
