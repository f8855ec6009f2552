package fio

import (
	"errors"
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/stats"
	"github.com/boxbench/boxbench/workload"
)

// OpFsync is the operation name of fio's sync calls (fsync, or fdatasync for wal).
const OpFsync = "fsync"

// agg is one operation summed over jobs.
type agg struct {
	op             string
	n              int64 // latency samples (completed I/Os or sync calls)
	ios            int64
	iops, bw       float64
	bytes          int64
	meanSum        float64 // Σ mean × N, for the weighted mean
	max            int64
	hist           *hdrhistogram.Histogram
	short, dropped int64
	clamped        int64
	hasBins        bool
	entries        int              // report entries (jobs) with samples
	fioPct         map[string]int64 // fio's percentiles, when one entry holds every sample
}

func (a *agg) add(l Latency) error {
	if l.N == 0 {
		return nil
	}
	a.entries++
	a.fioPct = l.Percentile
	a.n += l.N
	a.meanSum += l.Mean * float64(l.N)
	a.max = max(a.max, l.Max)
	if len(l.Bins) > 0 {
		a.hasBins = true
	}
	n, err := addBins(a.hist, l.Bins)
	a.clamped += n
	return err
}

// result turns a report into the run's Result; end is the offset from Clock.Start at which
// fio exited.
func (w *Workload) result(r *Report, end time.Duration) (*workload.Result, error) {
	c := w.cfg
	res := &workload.Result{Mode: workload.ModeClosed, Threads: c.Threads, Warmup: c.Warmup,
		Metrics: map[string]float64{}}
	aggs := []*agg{{op: "read"}, {op: "write"}, {op: "trim"}, {op: OpFsync}}
	for _, a := range aggs {
		a.hist = newHist()
	}
	var runtimeMS int64 // the measured window: the longest job (group) runtime
	var cpu time.Duration
	var errs []error
	errors0 := map[string]int64{}
	for _, j := range r.Jobs {
		// With group_reporting, job_runtime is the sum over the group's jobs, while each
		// direction's runtime is the group's wall time; usr_cpu and sys_cpu are shares of
		// job_runtime.
		rt := max(j.Read.Runtime, j.Write.Runtime, j.Trim.Runtime)
		if rt == 0 {
			rt = j.JobRuntime
		}
		runtimeMS = max(runtimeMS, rt)
		cpu += time.Duration((j.UsrCPU + j.SysCPU) / 100 * float64(j.JobRuntime) * float64(time.Millisecond))
		if j.Error != 0 {
			errors0["job_error"]++
			errs = append(errs, fmt.Errorf("fio job %s failed with errno %d", j.Name, j.Error))
		}
		for i, d := range []DirStats{j.Read, j.Write, j.Trim} {
			a := aggs[i]
			a.ios += d.TotalIOs
			a.iops += d.IOPS
			a.bw += float64(d.BWBytes)
			a.bytes += d.IOBytes
			a.short += d.ShortIOs
			a.dropped += d.DropIOs
			if err := a.add(d.Clat); err != nil {
				return res, err
			}
		}
		s := aggs[3]
		s.ios += j.Sync.TotalIOs
		if err := s.add(j.Sync.Lat); err != nil {
			return res, err
		}
	}
	measured := time.Duration(runtimeMS) * time.Millisecond
	res.Measured, res.ClientCPU, res.ClientCPUWall = measured, cpu, measured
	var clamped int64
	for _, a := range aggs {
		if a.n == 0 && a.ios == 0 {
			continue
		}
		if a.n > 0 && !a.hasBins {
			return res, fmt.Errorf("fio report has no %s latency bins: not --output-format=json+", a.op)
		}
		if a.op == OpFsync && measured > 0 {
			a.iops = float64(a.n) / measured.Seconds()
		}
		// fio's IOPS count reads, writes and trims, not sync calls: the fsync op is kept with
		// its rate and latency but stays out of the run's throughput, so the headline is fio's.
		s := workload.OpSummary{Op: a.op, Series: "latency", Count: a.n, Throughput: a.iops, Secondary: a.op == OpFsync}
		if a.n > 0 {
			s.Mean = a.meanSum / float64(a.n)
		}
		if err := s.FillFromHistogram(a.hist); err != nil {
			return res, err
		}
		if a.n > 0 {
			s.Max = a.max // fio's exact maximum rather than its bin's value
		}
		svc := s
		svc.Series = "service" // closed loop: service time is the latency
		res.Ops = append(res.Ops, s, svc)
		res.Intervals = append(res.Intervals, workload.Interval{Start: end - measured, End: end,
			Phase: workload.PhaseMeasure, Op: a.op, Series: "latency", Count: a.n, Hist: s.Hist})
		clamped += a.clamped
		w.metrics(res.Metrics, a, s)
		errors0["short_io"] += a.short
		errors0["dropped_io"] += a.dropped
	}
	if clamped > 0 {
		res.Metrics["clamped_values_total"] = float64(clamped)
	}
	for k, n := range errors0 {
		if n == 0 {
			delete(errors0, k)
		}
	}
	if len(errors0) > 0 {
		res.Errors = errors0
	}
	return res, errors.Join(errs...)
}

func (w *Workload) metrics(m map[string]float64, a *agg, s workload.OpSummary) {
	p := a.op
	if a.op == OpFsync {
		m["fsync_total"] = float64(a.n)
		m["fsync_per_second"] = a.iops
	} else {
		p += "_clat"
		m[a.op+"_iops"] = a.iops
		m[a.op+"_bytes_per_second"] = a.bw
		m[a.op+"_ios_total"] = float64(a.ios)
		m[a.op+"_bytes_total"] = float64(a.bytes)
	}
	if a.n == 0 {
		return
	}
	names := []string{"_p50_ns", "_p99_ns", "_p999_ns"}
	if a.entries == 1 && len(a.fioPct) > 0 {
		for i, k := range []string{"50.000000", "99.000000", "99.900000"} {
			if v, ok := a.fioPct[k]; ok {
				m[p+names[i]] = float64(v)
			}
		}
	} else if pc, err := stats.Percentiles(a.hist, 50, 99, 99.9); err == nil {
		for i := range names {
			m[p+names[i]] = float64(pc[i])
		}
	}
	m[p+"_mean_ns"] = s.Mean
	m[p+"_max_ns"] = float64(a.max) // fio's exact maximum, not a bin value
}
