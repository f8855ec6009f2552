package ycsb

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/boxbench/boxbench/driver/noop"
	"github.com/boxbench/boxbench/workload"
)

// BenchmarkRecord is the recording hot path alone: one worker files one operation (latency
// and service time, open loop) into its recorder.
func BenchmarkRecord(b *testing.B) {
	r := newRecorder(true, Mixes["a"].Proportions)
	b.ReportAllocs()
	v := int64(12345)
	for i := 0; b.Loop(); i++ {
		r.record(opType(i&1), kindOK, v, v-100)
		v = (v*7 + 13) & 0xfffff
	}
}

// BenchmarkWorkerNoop is one worker of a closed loop against the no-op driver, everything but
// the database: op choice, scrambled zipfian key choice, key formatting, value slicing, two
// clock reads and the recording. ns/op is the generator's cost per operation.
func BenchmarkWorkerNoop(b *testing.B) {
	for _, mix := range []string{"a", "c"} {
		b.Run("mix="+mix, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Mix, cfg.RecordCount, cfg.Warmup = mix, 100000, 0
			w, err := New(cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			sh, recs, workers := w.prepare(noop.DB{})
			sh.origin = time.Now()
			wk := workers[0]
			wk.quota = int64(b.N)
			sh.warmupEnd = 0
			b.ReportAllocs()
			b.ResetTimer()
			wk.run()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			runtime.KeepAlive(recs)
		})
	}
}

// BenchmarkRunNoop is the whole Run (collector and interval encoding included) with one
// thread against the no-op driver.
func BenchmarkRunNoop(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Mix, cfg.RecordCount, cfg.Warmup, cfg.Duration = "a", 100000, 0, 0
	cfg.OperationCount = int64(b.N)
	w, err := New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	res, err := w.run(context.Background(), noop.DB{}, workload.Clock{Start: time.Now()}, nil)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(res.Metrics["client_cpu_per_op_ns"], "cpu-ns/op")
}
