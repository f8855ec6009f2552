package results

import (
	"context"
	"testing"
	"time"

	"github.com/boxbench/boxbench/workload"
)

func TestRunRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta(map[string]string{"experiment_id": "x-0000000a", "seed": "42"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCells([]CellRecord{{ID: "platform=native", Params: map[string]string{"platform": "native"}},
		{ID: "platform=docker", Params: map[string]string{"platform": "docker"}, SkippedReason: "no engine"}}); err != nil {
		t.Fatal(err)
	}
	res := &workload.Result{Mode: workload.ModeClosed, Threads: 2, Measured: time.Second,
		Ops: []workload.OpSummary{{Op: "read", Series: "latency", Count: 100, Throughput: 100, P99: 5000, Hist: []byte{1, 2}},
			{Op: "read", Series: "service", Count: 100, Throughput: 100, P99: 4000}},
		Intervals: []workload.Interval{{Start: 0, End: time.Second, Phase: workload.PhaseMeasure, Op: "read", Series: "latency", Count: 100}}}
	rec := &RunRecord{ID: "platform=native#1", CellID: "platform=native", Rep: 1, Seq: 1, Status: "ok",
		Started: time.Now(), Ended: time.Now(), Result: res, Env: map[string]string{"kernel": "k"},
		Series:   []Point{{T: time.Second, Source: "db", Metric: "cpu_usage_seconds_per_second", Value: 0.5}},
		Warnings: []Warning{{Code: "c", Severity: "warning", Message: "m"}}}
	if err := s.PutRun(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	// Storing the same run again replaces it: never a duplicate.
	if err := s.PutRun(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Throughput == nil || *runs[0].Throughput != 100 {
		t.Fatalf("runs: %+v", runs)
	}
	if len(runs[0].Ops) != 2 || runs[0].Ops[0].P99 != 5000 || len(runs[0].Warnings) != 1 || runs[0].Env["kernel"] != "k" {
		t.Errorf("run: %+v", runs[0])
	}
	done, _ := s.Done()
	if !done["platform=native#1"] || len(done) != 1 {
		t.Errorf("done: %v", done)
	}
	pts, _ := s.Series("platform=native#1")
	ivs, _ := s.Intervals("platform=native#1")
	if len(pts) != 1 || pts[0].Value != 0.5 || len(ivs) != 1 || ivs[0].Count != 100 {
		t.Errorf("series %v intervals %v", pts, ivs)
	}
	cells, _ := s.Cells()
	if len(cells) != 2 || cells[0].SkippedReason != "no engine" {
		t.Errorf("cells: %+v", cells)
	}
	if id, _ := s.Meta("experiment_id"); id != "x-0000000a" {
		t.Errorf("meta: %q", id)
	}
}

func TestOpenExistingRefusesNonExperiment(t *testing.T) {
	if _, err := OpenExisting(t.TempDir()); err == nil {
		t.Error("a directory without results.db must be refused")
	}
}
