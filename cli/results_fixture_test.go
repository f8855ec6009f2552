package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/workload"
)

// resFix describes a small results file for the tests of what a results file may hold: a
// baseline cell and cells compared with it, each with ok runs (histograms, intervals,
// telemetry, warnings, facts), a failed run, a skipped cell and an event. Every string the file
// stores carries evil.
type resFix struct {
	evil      string
	cells     int // cells besides the baseline (default 1)
	reps      int // ok runs per cell (default 3)
	intervals int // intervals per run and op (default 3)
	reason    string
	sql       []string // statements run on the file after it is written
	hist      []byte   // when set, every stored histogram is replaced with it
}

// writeResFix writes the file into a new directory and returns the directory.
func writeResFix(t testing.TB, f resFix) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "exp")
	st, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := f.evil
	env, _ := json.Marshal(map[string]string{"kernel": "6.8" + e, "cpu_model" + e: "x" + e})
	if err := st.SetMeta(map[string]string{"experiment_id": "exp-1" + e, "name": "exp" + e,
		"spec": "name: exp\ndescription: \"" + strings.ReplaceAll(fmt.Sprintf("%q", e), `"`, "") + "\"\n", "seed": "1" + e,
		"created_at": "2026-01-01T00:00:00Z", "boxbench_version": "0.3.0" + e, "env": string(env)}); err != nil {
		t.Fatal(err)
	}
	n, reps, ivs := max(f.cells, 1), max(f.reps, 3), max(f.intervals, 3)
	base := "platform=native" + e
	cells := []results.CellRecord{{ID: base, Params: map[string]string{"platform": "native" + e}, BaselineID: base},
		{ID: "platform=skip" + e, Params: map[string]string{"platform": "skip" + e}, SkippedReason: "no engine" + e + f.reason}}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("platform=docker%d%s", i, e)
		cells = append(cells, results.CellRecord{ID: id, Params: map[string]string{"platform": fmt.Sprintf("docker%d%s", i, e)}, BaselineID: base})
	}
	if err := st.PutCells(cells); err != nil {
		t.Fatal(err)
	}
	if err := st.Event("adaptive"+e, "run added"+e); err != nil {
		t.Fatal(err)
	}
	seq := 0
	for rep := 1; rep <= reps; rep++ {
		for ci, c := range cells {
			if c.SkippedReason != "" {
				continue
			}
			seq++
			rec := fixRecord(c.ID, rep, seq, 1000*float64(10+ci)+float64(rep), ivs, e)
			if err := st.PutRun(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	failed := &results.RunRecord{ID: base + "#99", CellID: base, Rep: 99, Seq: seq + 1, Status: "failed",
		Reason: "died" + e + "\nsecond line" + e + f.reason, LogTail: "log" + e + "\n",
		Started: time.Unix(1e9, 0), Ended: time.Unix(1e9+5, 0)}
	if err := st.PutRun(context.Background(), failed); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if f.hist != nil {
		f.sql = append(f.sql, "UPDATE intervals SET hist = ?1", "UPDATE ops SET hist = ?1")
	}
	if len(f.sql) > 0 {
		db, err := sql.Open("sqlite", filepath.Join(dir, results.FileName))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range f.sql {
			var args []any
			if strings.Contains(q, "?1") {
				args = append(args, f.hist)
			}
			if _, err := db.Exec(q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	return dir
}

// fixRecord is an ok run of about thr ops/s with ivs measured intervals per op.
func fixRecord(cell string, rep, seq int, thr float64, ivs int, e string) *results.RunRecord {
	id := fmt.Sprintf("%s#%d", cell, rep)
	start := time.Unix(1e9+int64(seq)*60, 0)
	res := &workload.Result{Mode: workload.ModeClosed, Threads: 4, Measured: time.Duration(ivs) * time.Second,
		ClientCPU: time.Second, Metrics: map[string]float64{"tps_per_second" + e: thr}}
	for _, op := range []string{"read", "update" + e} {
		whole := hdrhistogram.New(1, 60_000_000_000, 3)
		for i := 0; i < ivs; i++ {
			h := hdrhistogram.New(1, 60_000_000_000, 3)
			for j := int64(1); j <= 50; j++ {
				_ = h.RecordValues(100_000+j*1000+int64(rep)*10, int64(thr)/100)
			}
			whole.Merge(h)
			res.Intervals = append(res.Intervals, workload.Interval{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
				Phase: workload.PhaseMeasure, Op: op, Series: "latency", Count: h.TotalCount(), Hist: encode(h)})
		}
		v := whole.ValueAtPercentilesSlice([]float64{50, 90, 95, 99, 99.9})
		res.Ops = append(res.Ops, workload.OpSummary{Op: op, Series: "latency", Count: whole.TotalCount(),
			Throughput: float64(whole.TotalCount()) / res.Measured.Seconds(), P50: v[0], P90: v[1], P95: v[2], P99: v[3], P999: v[4],
			Max: whole.Max(), Mean: whole.Mean(), Hist: encode(whole)})
	}
	rec := &results.RunRecord{ID: id, CellID: cell, Rep: rep, Seq: seq, Status: "ok", Started: start, Ended: start.Add(30 * time.Second),
		Result: res, Env: map[string]string{"kernel": "6.8" + e, "runtime" + e: "runc" + e},
		Facts:    map[string]string{"seed": "s" + e, "note" + e: "n" + e},
		Warnings: []results.Warning{{Code: "noisy" + e, Severity: "warning", Message: "cpu was busy" + e}}}
	for i := 1; i <= ivs; i++ {
		rec.Series = append(rec.Series, results.Point{T: time.Duration(i) * time.Second, Source: "db" + e, Metric: "cpu_seconds_per_second" + e, Label: "vda" + e, Value: 0.5})
	}
	return rec
}

func encode(h *hdrhistogram.Histogram) []byte {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		panic(err)
	}
	return b
}

// runMain runs boxbench in-process and returns its exit code, stdout and stderr.
func runMain(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"--work-root", t.TempDir()}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// fileExists reports whether path exists.
func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
