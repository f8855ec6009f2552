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
	if _, ok := softirqPerOp(nil, sec, res); ok {
		t.Error("a value without samples")
	}
	if _, ok := softirqPerOp(samples, sec, &workload.Result{Measured: sec}); ok {
		t.Error("a value without operations")
	}
}
