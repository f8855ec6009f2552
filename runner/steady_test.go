package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/vocabtest"
	"github.com/boxbench/boxbench/workload"
)

// rampRun is a 30 s measured window after a 1 s warm-up whose throughput climbs over the first
// 8 s and then holds at 50 000 ops/s (±1 %), with a histogram per interval.
func rampRun(t *testing.T) *workload.Result {
	t.Helper()
	res := &workload.Result{Warmup: time.Second, Measured: 30 * time.Second, Metrics: map[string]float64{}}
	var total int64
	for i := 0; i < 30; i++ {
		n := int64(50000 + 500*(i%3-1))
		if i < 8 {
			n = int64(50000 * (0.4 + 0.6*float64(i)/8))
		}
		h := hdrhistogram.New(1, 3600e9, 3)
		_ = h.RecordValues(100e3, n)
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		s := time.Second + time.Duration(i)*time.Second
		res.Intervals = append(res.Intervals, workload.Interval{Start: s, End: s + time.Second, Phase: workload.PhaseMeasure,
			Op: "read", Series: "latency", Count: n, Hist: enc})
		total += n
	}
	res.Ops = []workload.OpSummary{{Op: "read", Series: "latency", Count: total, Throughput: float64(total) / 30}}
	return res
}

func runnerWith(t *testing.T, extra string) *Runner {
	t.Helper()
	e, err := spec.Parse([]byte(SmallSpec+extra), "s.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{cfg: Config{Spec: e}}
}

func TestSteadyStateCutsTheRampAndSaysSo(t *testing.T) {
	res := rampRun(t)
	before := res.Throughput()
	rec := &results.RunRecord{Facts: map[string]string{}}
	runnerWith(t, "").steadyState(res, rec)
	cut := res.Metrics[MetricTruncated]
	if cut < 10 || cut > 15 {
		t.Errorf("cut %v s, want 10–15 (the ramp lasts 8 s; MSER-5 cuts whole batches of 5)", cut)
	}
	if res.Metrics[MetricUntruncated] != before || !(res.Throughput() > before) {
		t.Errorf("throughput %v after the cut, %v before (stored %v)", res.Throughput(), before, res.Metrics[MetricUntruncated])
	}
	if f := rec.Facts["steady_state"]; !strings.HasPrefix(f, "MSER-5 over 30 intervals: the first") || rec.Steady != results.SteadyCut {
		t.Errorf("steady %q, fact %q", rec.Steady, f)
	}
}

func TestSteadyStateOff(t *testing.T) {
	res := rampRun(t)
	before := res.Throughput()
	rec := &results.RunRecord{Facts: map[string]string{}}
	runnerWith(t, "steadyState: off\n").steadyState(res, rec)
	if res.Throughput() != before || res.Metrics[MetricTruncated] != 0 {
		t.Error("steadyState: off changed the result")
	}
	if f := rec.Facts["steady_state"]; !strings.HasPrefix(f, "off") || rec.Steady != results.SteadyOff {
		t.Errorf("steady %q, fact %q, want it to say off", rec.Steady, f)
	}
}
