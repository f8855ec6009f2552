package sysbench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/workload"
)

// The fixtures are real sysbench 1.0.20 (Debian) outputs; testdata/README.md says how they
// were captured. Expected values below were read from the files.

func parseFixture(t *testing.T, name string) *Output {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := Parse(f)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return out
}

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		name        string
		intervals   int
		checkpoints int
		rate        int
		tx, ign     int64   // final transactions, ignored errors
		totalTime   float64 // final total time
		sumMS       float64
		buckets     int
		histCount   int64
		firstBucket float64
		firstIv     Interval
	}{
		{name: "pg-oltp_read_write", intervals: 6, checkpoints: 1, tx: 4263, ign: 8, totalTime: 6.0099, sumMS: 7997.00,
			buckets: 148, histCount: 4261, firstBucket: 0.702,
			firstIv: Interval{Time: 1, Threads: 2, TPS: 792.65, QPS: 15864.89, Reads: 11107.02, Writes: 3170.58, Others: 1587.29, Percentile: 99, LatencyMS: 7.84}},
		{name: "my-oltp_read_write", intervals: 6, checkpoints: 1, tx: 1465, totalTime: 6.0089, sumMS: 7999.19,
			buckets: 179, histCount: 1464, firstBucket: 0.904,
			firstIv: Interval{Time: 1, Threads: 2, TPS: 451.48, QPS: 9063.39, Reads: 6348.56, Writes: 1809.89, Others: 904.94, Percentile: 99, LatencyMS: 20.37}},
		{name: "pg-oltp_write_only", intervals: 4, tx: 6281, ign: 16, totalTime: 4.0070, sumMS: 7993.45,
			buckets: 221, histCount: 6281, firstBucket: 0.218,
			firstIv: Interval{Time: 1, Threads: 2, TPS: 2898.98, QPS: 17423.85, Writes: 11601.92, Others: 5821.93, Percentile: 99, LatencyMS: 2.48, ErrPS: 5.99}},
		{name: "my-oltp_point_select", intervals: 5, checkpoints: 1, tx: 72816, totalTime: 6.0083, sumMS: 7974.86,
			buckets: 382, histCount: 72792, firstBucket: 0.018,
			firstIv: Interval{Time: 1, Threads: 2, TPS: 42999.87, QPS: 42999.87, Reads: 42999.87, Percentile: 99, LatencyMS: 0.23}},
		{name: "pg-oltp_point_select-rate", intervals: 6, checkpoints: 1, rate: 500, tx: 1982, totalTime: 6.0221, sumMS: 3792.16,
			buckets: 339, histCount: 1982, firstBucket: 0.032,
			firstIv: Interval{Time: 1, Threads: 2, TPS: 515.19, QPS: 515.19, Reads: 515.19, Percentile: 99, LatencyMS: 26.20, HasQueue: true}},
		{name: "my-oltp_point_select-rate", intervals: 6, checkpoints: 1, rate: 500, tx: 1965, totalTime: 6.0085, sumMS: 1050.83,
			buckets: 262, histCount: 1963, firstBucket: 0.037,
			firstIv: Interval{Time: 1, Threads: 2, TPS: 452.30, QPS: 452.30, Reads: 452.30, Percentile: 99, LatencyMS: 6.55, HasQueue: true}},
		{name: "pg-oltp_read_write-overload", intervals: 4, rate: 2000, tx: 900, totalTime: 4.0070, sumMS: 1973399.69,
			buckets: 147, histCount: 900, firstBucket: 4.652,
			firstIv: Interval{Time: 1, Threads: 1, TPS: 139.76, QPS: 2802.17, Reads: 1962.62, Writes: 559.04, Others: 280.52, Percentile: 99, LatencyMS: 909.80,
				QueueLength: 1887, Concurrency: 1, HasQueue: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := parseFixture(t, tt.name)
			if out.Version != "1.0.20" {
				t.Errorf("Version = %q", out.Version)
			}
			if len(out.Fatal) != 0 {
				t.Errorf("Fatal = %q", out.Fatal)
			}
			if len(out.Intervals) != tt.intervals || len(out.Checkpoints) != tt.checkpoints || out.TargetRate != tt.rate {
				t.Fatalf("intervals %d checkpoints %d rate %d; want %d %d %d", len(out.Intervals),
					len(out.Checkpoints), out.TargetRate, tt.intervals, tt.checkpoints, tt.rate)
			}
			if out.Intervals[0] != tt.firstIv {
				t.Errorf("first interval\n got %+v\nwant %+v", out.Intervals[0], tt.firstIv)
			}
			for i, iv := range out.Intervals {
				if iv.Time != i+1 {
					t.Errorf("interval %d at %ds", i, iv.Time)
				}
				if iv.HasQueue != (tt.rate > 0) {
					t.Errorf("interval %d HasQueue = %v", i, iv.HasQueue)
				}
			}
			f := out.Final
			if f == nil {
				t.Fatal("no final report")
			}
			if f.Transactions != tt.tx || f.Events != tt.tx || f.IgnoredErrors != tt.ign || f.TotalTime != tt.totalTime || f.SumMS != tt.sumMS {
				t.Errorf("final = %+v", *f)
			}
			if f.Percentile != 99 || f.Queries != f.Reads+f.Writes+f.Others {
				t.Errorf("final percentile %d, queries %d != %d+%d+%d", f.Percentile, f.Queries, f.Reads, f.Writes, f.Others)
			}
			var n int64
			for _, b := range out.Histogram {
				n += b.Count
			}
			if len(out.Histogram) != tt.buckets || n != tt.histCount || out.Histogram[0].ValueMS != tt.firstBucket {
				t.Errorf("histogram: %d buckets, %d values, first %v", len(out.Histogram), n, out.Histogram[0])
			}
			for _, c := range out.Checkpoints {
				if c.TotalTime < 1.9 || c.TotalTime > 2.1 || c.Transactions == 0 {
					t.Errorf("checkpoint = %+v", c)
				}
			}
		})
	}
}

func TestParseFailures(t *testing.T) {
	tests := []struct {
		name, fatal string
	}{
		{"pg-refused", "Connection to database failed"},
		{"my-notable", `Table 'ycsb.sbtest3' doesn't exist`},
		{"pg-queuefull", "The event queue is full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := parseFixture(t, tt.name)
			if out.Final != nil || len(out.Histogram) != 0 {
				t.Errorf("a failed run has a final report: %+v", out.Final)
			}
			if !strings.Contains(strings.Join(out.Fatal, "\n"), tt.fatal) {
				t.Errorf("Fatal = %q, want it to mention %q", out.Fatal, tt.fatal)
			}
			b, _ := os.ReadFile(filepath.Join("testdata", tt.name+".txt"))
			if got := failureOutput(b); !strings.HasPrefix(got, "FATAL: ") || !strings.Contains(got, tt.fatal) {
				t.Errorf("failureOutput = %q", got)
			}
		})
	}
}

func TestParseTruncated(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "pg-oltp_read_write.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	cut := strings.Index(s, "[ 4s ]") // a run killed after 3 s
	out, err := Parse(strings.NewReader(s[:cut]))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Intervals) != 3 || len(out.Checkpoints) != 1 || out.Final != nil {
		t.Errorf("truncated: %d intervals, %d checkpoints, final %v", len(out.Intervals), len(out.Checkpoints), out.Final)
	}
}

func TestResultClosedWithWarmup(t *testing.T) {
	out := parseFixture(t, "pg-oltp_read_write")
	c := pgConfig()
	c.Threads, c.Warmup, c.Duration = 2, 2*time.Second, 4*time.Second
	started := 300 * time.Millisecond
	res, err := c.result(out, timing{started: started, cpu: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != workload.ModeClosed || res.TargetOps != 0 || res.Threads != 2 {
		t.Errorf("mode %s target %v threads %d", res.Mode, res.TargetOps, res.Threads)
	}
	if want := 4009800 * time.Microsecond; absDur(res.Measured-want) > time.Millisecond || res.Warmup != 2000100*time.Microsecond {
		t.Errorf("Measured = %s (want ≈%s), Warmup = %s", res.Measured, want, res.Warmup)
	}
	if len(res.Ops) != 2 || res.Ops[0].Series != "latency" || res.Ops[1].Series != "service" {
		t.Fatalf("ops = %+v", res.Ops)
	}
	lat := res.Ops[0]
	if lat.Op != Op || lat.Count != 4263 || lat.Errors != 8 {
		t.Errorf("latency op = %+v", lat)
	}
	if got, want := lat.Throughput, 4263/4.0098; abs(got-want) > 1e-9 {
		t.Errorf("Throughput = %v, want %v", got, want)
	}
	if want := 7997.00e6 / 4263; abs(lat.Mean-want) > 1e-6 {
		t.Errorf("Mean = %v, want %v", lat.Mean, want)
	}
	// sysbench's summary: min 0.70 ms, max 16.06 ms, p99 6.67 ms (its bucket value).
	if lat.P50 < 700_000 || lat.P50 > lat.P99 || lat.P99 < 6_600_000 || lat.P99 > 6_750_000 || lat.Max < 15_900_000 || lat.Max > 16_300_000 {
		t.Errorf("percentiles p50 %d p99 %d max %d", lat.P50, lat.P99, lat.Max)
	}
	h, err := hdrhistogram.Decode(lat.Hist)
	if err != nil || h.TotalCount() != 4261 {
		t.Fatalf("hist: %v, count %d", err, h.TotalCount())
	}
	var warm, meas int
	for i, iv := range res.Intervals {
		if iv.Op != Op || iv.Series != "latency" || iv.Hist != nil || iv.End-iv.Start != time.Second {
			t.Errorf("interval %d = %+v", i, iv)
		}
		if iv.End != started+time.Duration(i+1)*time.Second {
			t.Errorf("interval %d ends at %s", i, iv.End)
		}
		switch iv.Phase {
		case workload.PhaseWarmup:
			warm++
		case workload.PhaseMeasure:
			meas++
		}
	}
	if warm != 2 || meas != 4 || res.Intervals[0].Count != 793 {
		t.Errorf("%d warm-up and %d measured intervals; first count %d", warm, meas, res.Intervals[0].Count)
	}
	m := res.Metrics
	checks := map[string]float64{"transactions_total": 4263, "errors_total": 8, "reconnects_total": 0,
		"latency_p99_reported_ns": 6.67e6, "latency_max_reported_ns": 16.06e6,
		"client_cpu_per_transaction_ns": 2e9 / (1620 + 4263)}
	for k, v := range checks {
		if abs(m[k]-v) > 1e-6 {
			t.Errorf("metric %s = %v, want %v", k, m[k], v)
		}
	}
	if abs(m["queries_per_second"]-float64(85369)/4.0098) > 1e-6 {
		t.Errorf("queries_per_second = %v", m["queries_per_second"])
	}
	if res.Errors["ignored_error"] != 8 {
		t.Errorf("Errors = %v", res.Errors)
	}
	if _, ok := m["coordinated_omission_corrected_bool"]; ok {
		t.Error("closed loop labelled as corrected")
	}
}

func TestResultOpen(t *testing.T) {
	out := parseFixture(t, "pg-oltp_read_write-overload")
	c := pgConfig()
	c.Threads, c.Warmup, c.Duration, c.Rate = 1, 0, 4*time.Second, 2000
	res, err := c.result(out, timing{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != workload.ModeOpen || res.TargetOps != 2000 {
		t.Errorf("mode %s target %v", res.Mode, res.TargetOps)
	}
	if len(res.Ops) != 1 || res.Ops[0].Series != "latency" {
		t.Fatalf("open loop must store latency only: %+v", res.Ops)
	}
	// The queue grew all run: latency includes it, up to 3.5 s.
	if p := res.Ops[0].P99; p < 3_400_000_000 || p > 3_600_000_000 {
		t.Errorf("P99 = %d", p)
	}
	m := res.Metrics
	if m["coordinated_omission_corrected_bool"] != 1 || m["target_rate_transactions_per_second"] != 2000 {
		t.Errorf("metrics = %v", m)
	}
	if m["queue_length_max_events"] < 1887 {
		t.Errorf("queue_length_max_events = %v", m["queue_length_max_events"])
	}
	for _, iv := range res.Intervals {
		if iv.Phase != workload.PhaseMeasure {
			t.Errorf("no warm-up, yet interval %+v", iv)
		}
	}
}

func TestResultFailed(t *testing.T) {
	out := parseFixture(t, "pg-queuefull")
	c := pgConfig()
	c.Warmup, c.Rate = 0, 400000
	res, err := c.result(out, timing{})
	if err == nil || res == nil || len(res.Ops) != 0 {
		t.Errorf("result of a failed run: %+v, %v", res, err)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
