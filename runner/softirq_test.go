package runner

import (
	"math"
	"testing"
	"time"

	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

func TestSoftirqPerOp(t *testing.T) {
	sec := time.Second
	res := &workload.Result{Warmup: 2 * sec, Measured: 4 * sec,
		Ops: []workload.OpSummary{{Op: "read", Series: "latency", Count: 30000}, {Op: "update", Series: "latency", Count: 10000},
			{Op: "read", Series: "service", Count: 30000}}, Metrics: map[string]float64{}}
	var samples []telemetry.Sample
	for i := 1; i <= 8; i++ {
		v := 0.05 // warm-up and pre-run: not counted
		if i >= 4 && i <= 7 {
			v = 0.2
		}
		samples = append(samples, telemetry.Sample{T: time.Duration(i) * sec, Source: "host", Metric: "cpu_softirq_seconds_per_second", Value: v},
			telemetry.Sample{T: time.Duration(i) * sec, Source: "db", Metric: "cpu_softirq_seconds_per_second", Value: 9})
	}
	got, ok := softirqPerOp(samples, sec, res)
	// 0.2 cores × 4 s = 0.8 CPU s over 40000 ops = 20 µs per op.
	if want := 20000.0; !ok || math.Abs(got-want) > 1e-6 {
		t.Errorf("softirq per op = %v (%v), want %v ns", got, ok, want)
	}
	// A remote client's window, 1.5 s later on the run's clock: its intervals say where it is.
	late := *res
	for i := 4; i <= 8; i++ {
		late.Intervals = append(late.Intervals, workload.Interval{Start: time.Duration(i)*sec + sec/2, End: time.Duration(i+1)*sec + sec/2,
			Phase: workload.PhaseMeasure, Op: "read", Series: "latency"})
	}
	late.Measured = 5 * sec
	samples = append(samples, telemetry.Sample{T: 9 * sec, Source: "host", Metric: "cpu_softirq_seconds_per_second", Value: 0.2})
	// Samples ending at 6, 7, 8, 9 s have their middles in (4.5, 9.5): (0.2+0.2+0.05+0.2)/4
	// cores × 5 s / 40000 ops.
	if got, ok := softirqPerOp(samples, sec, &late); !ok || math.Abs(got-20312.5) > 1e-6 {
		t.Errorf("remote window: softirq per op = %v (%v), want 20312.5 ns", got, ok)
	}
	if _, ok := softirqPerOp(nil, sec, res); ok {
		t.Error("a value without samples")
	}
	if _, ok := softirqPerOp(samples, sec, &workload.Result{Measured: sec}); ok {
		t.Error("a value without operations")
	}
}
