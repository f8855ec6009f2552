package runner

import (
	"time"

	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

// MetricSoftirqPerOp is the host's CPU time in soft interrupts per operation over the measured
// window, in nanoseconds: where virtual networks (bridges, VXLAN overlays, NAT) spend the CPU
// they cost, which the box's own cgroup does not see.
const MetricSoftirqPerOp = "host_softirq_cpu_per_op_ns"

// softirqPerOp divides the host's softirq CPU time over the measured window by the operations
// of that window. Samples are the host's cpu_softirq_seconds_per_second (cores) at the end of
// each interval; the window starts one interval (the pre-run sample) plus the warm-up plus
// what the steady-state detection cut after the clock's start. ok is false without samples or
// operations.
func softirqPerOp(samples []telemetry.Sample, interval time.Duration, res *workload.Result) (float64, bool) {
	if res == nil || res.Measured <= 0 {
		return 0, false
	}
	var ops int64
	for _, o := range res.Ops {
		if o.Series == "latency" && !o.Secondary {
			ops += o.Count
		}
	}
	if ops == 0 {
		return 0, false
	}
	cut := time.Duration(res.Metrics[MetricTruncated] * float64(time.Second))
	from := interval + res.Warmup + cut
	to := from + res.Measured + interval/2
	var cores float64
	n := 0
	for _, s := range samples {
		if s.Source == "host" && s.Metric == "cpu_softirq_seconds_per_second" && s.T > from && s.T <= to {
			cores += s.Value
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	// Mean cores over the window × its length = CPU seconds in softirq.
	cpu := cores / float64(n) * res.Measured.Seconds()
	return cpu / float64(ops) * 1e9, true
}
