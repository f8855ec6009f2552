package loadgen

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/driver/noop"
	"github.com/boxbench/boxbench/workload"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// BenchmarkGeneratorNoop runs the whole generator (workers, recorders, collector, interval
// encoding) with one thread, closed loop, against the no-op driver, for b.N operations: ns/op
// is what one operation costs the client besides the database's own round trip. Run it with
// -cpu 1 to see what one core does. The per-worker hot path alone, and the recording path
// alone, are BenchmarkWorkerNoop and BenchmarkRecord in workload/ycsb.
func BenchmarkGeneratorNoop(b *testing.B) {
	for _, mix := range []string{"a", "c"} {
		b.Run("mix="+mix, func(b *testing.B) {
			cfg := ycsb.DefaultConfig()
			cfg.Mix, cfg.RecordCount, cfg.Threads = mix, 100000, 1
			cfg.Warmup, cfg.Duration, cfg.OperationCount = 0, 0, int64(b.N)
			w, err := ycsb.New(cfg, map[string]ycsb.Opener{"noop": noop.New})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			res, err := w.Run(context.Background(), workload.Target{DBMS: "noop"}, workload.Clock{Start: time.Now()})
			b.StopTimer()
			cpu := cpuTime() - cpu0
			if err != nil {
				b.Fatal(err)
			}
			if got := int64(res.Metrics["operations_total"]); got != int64(b.N) {
				b.Fatalf("recorded %d operations, want %d", got, b.N)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			// Per CPU second of the process: what one core does, whatever else the shared
			// machine runs meanwhile.
			b.ReportMetric(float64(b.N)/cpu.Seconds(), "ops/cpu-s")
		})
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
