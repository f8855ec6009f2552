package runner

import (
	"time"

	"github.com/boxbench/boxbench/attribution"
	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

// MetricSoftirqPerOp is the host's CPU time in soft interrupts per operation over the measured
// window, in nanoseconds: where virtual networks (bridges, VXLAN overlays, NAT) spend the CPU
// they cost, which the box's own cgroup does not see.
const MetricSoftirqPerOp = "host_softirq_cpu_per_op_ns"

// measuredWindow is the result's measured window on the run's clock with its operations. The
// window ends with the last measured interval of the result (on the run's clock, where a
// remote client's intervals were moved) and is res.Measured long (the steady-state cut
// included); without intervals it starts one interval (the pre-run sample) plus the warm-up
// after the clock's start. ok is false without a window or operations.
func measuredWindow(interval time.Duration, res *workload.Result) (attribution.Window, bool) {
	if res == nil || res.Measured <= 0 {
		return attribution.Window{}, false
	}
	var ops int64
	for _, o := range res.Ops {
		if o.Series == "latency" && !o.Secondary {
			ops += o.Count
		}
	}
	if ops == 0 {
		return attribution.Window{}, false
	}
	var end time.Duration
	for _, iv := range res.Intervals {
		if iv.Phase == workload.PhaseMeasure {
			end = max(end, iv.End)
		}
	}
	if end == 0 {
		end = interval + res.Warmup + res.Measured
	}
	return attribution.Window{From: end - res.Measured, To: end, Interval: interval, Ops: ops}, true
}

// softirqPerOp divides the host's softirq CPU time over the measured window by the operations
// of that window. Samples are the host's cpu_softirq_seconds_per_second (cores) over the
// interval ending at each sample's time; a sample counts when the middle of its interval is in
// the window. ok is false without samples or operations.
func softirqPerOp(samples []telemetry.Sample, interval time.Duration, res *workload.Result) (float64, bool) {
	w, ok := measuredWindow(interval, res)
	if !ok {
		return 0, false
	}
	cores, ok := attribution.MeanRate(samples, w, "host", "cpu_softirq_seconds_per_second", "")
	if !ok {
		return 0, false
	}
	// Mean cores over the window × its length = CPU seconds in softirq.
	cpu := cores * res.Measured.Seconds()
	return cpu / float64(w.Ops) * 1e9, true
}
