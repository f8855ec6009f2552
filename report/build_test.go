package report

import (
	"context"
	"math"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
	"github.com/boxbench/boxbench/workload"
)

// smallRun is a run whose "read" latencies are given exactly (ns, one value per entry, each
// recorded weight times).
type smallRun struct {
	cell   string
	rep    int
	thr    float64
	values []int64
	weight int64
	status string
	warn   []results.Warning
	facts  map[string]string
}

func putSmall(t *testing.T, st *results.Store, runs []smallRun) {
	t.Helper()
	for i, r := range runs {
		rec := &results.RunRecord{ID: r.cell + "#" + string(rune('0'+r.rep)), CellID: r.cell, Rep: r.rep, Seq: i + 1,
			Status: "ok", Started: fixStart, Ended: fixStart.Add(time.Minute), Warnings: r.warn, Facts: r.facts}
		if r.status != "" {
			rec.Status, rec.Reason = r.status, "boom"
		} else {
			h := hdrhistogram.New(1, 60_000_000_000, 3)
			for _, v := range r.values {
				if err := h.RecordValues(v, r.weight); err != nil {
					t.Fatal(err)
				}
			}
			p := h.ValueAtPercentilesSlice([]float64{50, 90, 95, 99, 99.9})
			rec.Result = &workload.Result{Mode: workload.ModeClosed, Threads: 1, Measured: 10 * time.Second,
				Ops: []workload.OpSummary{{Op: "read", Series: LatencySeries, Count: h.TotalCount(), Throughput: r.thr,
					P50: p[0], P90: p[1], P95: p[2], P99: p[3], P999: p[4], Max: h.Max(), Mean: h.Mean(), Hist: encodeHist(h, false)}}}
		}
		if err := st.PutRun(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBuildMergesHistogramsAndCompares(t *testing.T) {
	st, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutCells([]results.CellRecord{
		{ID: "platform=native", Params: map[string]string{"platform": "native"}, BaselineID: "platform=native"},
		{ID: "platform=docker", Params: map[string]string{"platform": "docker"}, BaselineID: "platform=native"},
	}); err != nil {
		t.Fatal(err)
	}
	throttled := results.Warning{Code: "db_cpu_throttled", Severity: "warning", Message: "first message"}
	// Run 1 of docker is fast and has 9× the operations of run 2, which is slow: the merged p50
	// must be the fast value; averaging the two runs' p50 would give about 5.5 ms.
	putSmall(t, st, []smallRun{
		{cell: "platform=native", rep: 1, thr: 1000, values: []int64{100_000}, weight: 10},
		{cell: "platform=native", rep: 2, thr: 1010, values: []int64{100_000}, weight: 10},
		{cell: "platform=native", rep: 3, thr: 990, values: []int64{100_000}, weight: 10},
		{cell: "platform=native", rep: 4, thr: 1005, values: []int64{100_000}, weight: 10},
		{cell: "platform=docker", rep: 1, thr: 900, values: []int64{1_000_000}, weight: 90, warn: []results.Warning{throttled}},
		{cell: "platform=docker", rep: 2, thr: 910, values: []int64{10_000_000}, weight: 10,
			warn: []results.Warning{{Code: "db_cpu_throttled", Severity: "warning", Message: "second message"}}},
		{cell: "platform=docker", rep: 3, thr: 890, values: []int64{1_000_000}, weight: 10},
		{cell: "platform=docker", rep: 4, thr: 905, values: []int64{1_000_000}, weight: 10},
		{cell: "platform=docker", rep: 5, status: "failed"},
	})
	r, err := Build(st)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Cell("platform=docker")
	if d.Runs != 4 || len(d.Failed) != 1 {
		t.Fatalf("docker: %d ok, %d failed runs; want 4 and 1", d.Runs, len(d.Failed))
	}
	l := d.LatencyOf("read")
	if l == nil || l.Count != 120 {
		t.Fatalf("docker read latency %+v: want 120 merged operations", l)
	}
	if math.Abs(l.P50-1000) > 1 {
		t.Errorf("merged p50 = %v µs, want 1000 (the value of 110 of 120 operations)", l.P50)
	}
	if l.P99 < 9990 || l.P99 > 10010 {
		t.Errorf("merged p99 = %v µs, want 10000", l.P99)
	}
	if l.RunP50.N != 4 || l.RunP50.Max < 9990 {
		t.Errorf("per-run p50 summary %+v: want 4 runs, max 10 ms", l.RunP50)
	}
	want, err := stats.Compare([]float64{1000, 1010, 990, 1005}, []float64{900, 910, 890, 905}, stats.CompareOptions{HigherIsBetter: true})
	if err != nil {
		t.Fatal(err)
	}
	o := d.Overhead
	if o == nil {
		t.Fatal("docker has no overhead")
	}
	if o.Ratio != want.Ratio || o.RatioCI != want.RatioCI || o.UTest.P != want.UTest.P || o.Verdict != stats.VerdictSlower {
		t.Errorf("overhead %+v, want %+v", o, want)
	}
	if r.Cell("platform=native").Overhead != nil {
		t.Error("the baseline has an overhead")
	}
	var got *Warning
	for i := range d.Warnings {
		if d.Warnings[i].Code == "db_cpu_throttled" {
			got = &d.Warnings[i]
		}
	}
	if got == nil || got.Runs != 2 || got.Message != "first message" {
		t.Errorf("aggregated warning %+v: want 2 runs and the first message", got)
	}
	if !hasCode(r.Warnings, CodeRunsFailed) {
		t.Errorf("report warnings %+v lack %s", r.Warnings, CodeRunsFailed)
	}
}

func hasCode(ws []Warning, code string) bool {
	for _, w := range ws {
		if w.Code == code {
			return true
		}
	}
	return false
}

func TestBuildEdgeCases(t *testing.T) {
	r, err := Build(openFixture(t, "edge"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cell, code string
		overhead   bool
	}{
		{"platform=native/storage=bind", CodeNoOKRuns, false},
		{"platform=docker/storage=bind", CodeBaselineNoRuns, false},
		{"platform=docker/storage=tmpfs", CodeUnderpowered, true},
		{"platform=docker/storage=tmpfs", CodeHistogramMissing, true},
		{"platform=docker/storage=volume", CodeBaselineSkipped, false},
		{"platform=kata/storage=volume", CodeNoBaseline, false},
	}
	for _, c := range cases {
		cell := r.Cell(c.cell)
		if cell == nil {
			t.Fatalf("no cell %s", c.cell)
		}
		if !hasCode(cell.Warnings, c.code) {
			t.Errorf("%s: warnings %+v lack %s", c.cell, cell.Warnings, c.code)
		}
		if (cell.Overhead != nil) != c.overhead {
			t.Errorf("%s: overhead %v, want present=%t", c.cell, cell.Overhead, c.overhead)
		}
	}
	if c := r.Cell("platform=native/storage=volume"); c == nil || !c.Skipped() {
		t.Error("the skipped cell is not listed as skipped")
	}
	if one := r.Cell("platform=docker/storage=volume"); one.Throughput.N != 1 || one.Throughput.CI95.Valid {
		t.Errorf("one-run cell: %+v", one.Throughput)
	}
}
