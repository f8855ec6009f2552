package workload

import (
	"errors"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// runOf builds a closed-loop result of n one-second measured intervals after a 2 s warm-up;
// interval i has counts[i] reads, each of latency (i+1) ms, on the latency and service series.
func runOf(t *testing.T, counts []int64) *Result {
	t.Helper()
	r := &Result{Warmup: 2 * time.Second, Measured: time.Duration(len(counts)) * time.Second}
	enc := func(n int64, v int64) []byte {
		h := hdrhistogram.New(1, 3600e9, 3)
		for range n {
			_ = h.RecordValue(v)
		}
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	r.Intervals = append(r.Intervals, Interval{Start: 0, End: 2 * time.Second, Phase: PhaseWarmup, Op: "read", Series: "latency", Count: 5, Hist: enc(5, 1e6)})
	var total int64
	for i, n := range counts {
		s := 2*time.Second + time.Duration(i)*time.Second
		for _, se := range []string{"latency", "service"} {
			r.Intervals = append(r.Intervals, Interval{Start: s, End: s + time.Second, Phase: PhaseMeasure, Op: "read",
				Series: se, Count: n, Errors: 1, Hist: enc(n, int64(i+1)*1e6)})
		}
		total += n
	}
	for _, se := range []string{"latency", "service"} {
		r.Ops = append(r.Ops, OpSummary{Op: "read", Series: se, Count: total, Throughput: float64(total) / r.Measured.Seconds()})
	}
	return r
}

func TestMeasuredSeries(t *testing.T) {
	r := runOf(t, []int64{10, 20, 30})
	starts, rates := r.MeasuredSeries()
	if len(rates) != 3 || rates[0] != 10 || rates[2] != 30 || starts[0] != 2*time.Second {
		t.Errorf("series %v at %v, want [10 20 30] from 2s (the warm-up interval left out, service not added)", rates, starts)
	}
}

func TestTruncateRecomputesTheWindow(t *testing.T) {
	r := runOf(t, []int64{10, 100, 100, 100})
	if err := r.Truncate(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	if r.Measured != 3*time.Second || r.Warmup != 3*time.Second {
		t.Errorf("measured %s warm-up %s, want 3s and 3s", r.Measured, r.Warmup)
	}
	for _, o := range r.Ops {
		if o.Count != 300 || o.Errors != 3 || o.Throughput != 100 {
			t.Errorf("%s: count %d errors %d throughput %v, want 300, 3, 100", o.Series, o.Count, o.Errors, o.Throughput)
		}
		// The intervals kept have latencies 2, 3 and 4 ms: the median is 3 ms, the maximum 4.
		if o.P50 < 2.99e6 || o.P50 > 3.01e6 || o.Max < 3.99e6 || o.Max > 4.01e6 {
			t.Errorf("%s: p50 %d max %d, want 3 ms and 4 ms", o.Series, o.P50, o.Max)
		}
		if len(o.Hist) == 0 {
			t.Errorf("%s: no histogram", o.Series)
		}
	}
	if r.Intervals[1].Phase != PhaseWarmup || r.Intervals[3].Phase != PhaseMeasure {
		t.Errorf("the cut interval is %s, the next %s: want warmup, measure", r.Intervals[1].Phase, r.Intervals[3].Phase)
	}
	if r.Throughput() != 100 {
		t.Errorf("throughput %v, want 100", r.Throughput())
	}
}

func TestTruncateNeedsHistograms(t *testing.T) {
	r := runOf(t, []int64{10, 100, 100})
	for i := range r.Intervals {
		r.Intervals[i].Hist = nil // as sysbench reports them
	}
	before := r.Ops[0]
	if err := r.Truncate(3 * time.Second); !errors.Is(err, ErrNoHistograms) {
		t.Fatalf("err %v, want ErrNoHistograms", err)
	}
	if r.Ops[0].Count != before.Count || r.Measured != 3*time.Second || r.Intervals[1].Phase != PhaseMeasure {
		t.Error("a failed Truncate changed the result")
	}
}
