package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/builtin/workloads"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/fake"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
)

// The recipe of docs/architecture.md, "Writing a workload", walked in one place: a kind of
// workload of its own (tick, below) and one row of the table of kinds (tickKind, added with
// builtin.Set.WithWorkloads as the fake database is added with builtin.With). Nothing else
// changes: the spec takes it as a workload type and as a neighbour's, the runner runs it on the
// fake platform, measured and beside the database, and learns what it can do from its Traits.

// tickKind is the row: what the spec may name, and how a cell's workload is built.
var tickKind = builtin.WorkloadKind{Name: "tick",
	Build: func(_ *spec.Experiment, w *spec.Workload, _ workloads.Cell, _ workloads.Env) (workload.Workload, error) {
		return &tick{duration: w.Duration.D(), warmup: w.Warmup.D(), interval: w.Interval.D(), threads: w.Threads}, nil
	},
	Neighbour: func(_ *spec.Workload, window time.Duration) (workload.Workload, error) {
		return &tick{duration: window, interval: window, threads: 1}, nil
	},
}

// tickSet is fakeSet with the tick row.
var tickSet = fakeSet.WithWorkloads(tickKind)

// tick counts intervals: one operation per interval, for warm-up and the measured window. It
// needs no data set and connects to nothing; it says when its window starts (its Traits), so
// the runner reads the database's own counters then.
type tick struct {
	duration, warmup, interval time.Duration
	threads                    int
	laidOut                    bool
}

func (w *tick) Name() string                                { return "tick" }
func (w *tick) LoadKey() string                             { return "" }
func (w *tick) Load(context.Context, workload.Target) error { return nil }

func (w *tick) Traits() workload.Traits {
	return workload.Traits{NotifiesMeasuring: true, Layout: func(context.Context, workload.Target) error {
		w.laidOut = true
		return nil
	}}
}

func (w *tick) Run(ctx context.Context, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	res := &workload.Result{Mode: workload.ModeClosed, Threads: w.threads, Warmup: w.warmup, Measured: w.duration}
	var count int64
	for start := clk.Since(time.Now()); clk.Since(time.Now()) < start+w.warmup+w.duration; {
		phase := workload.PhaseMeasure
		if clk.Since(time.Now()) < start+w.warmup {
			phase = workload.PhaseWarmup
		} else if count == 0 && t.Measuring != nil {
			t.Measuring()
		}
		from := clk.Since(time.Now())
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(w.interval):
		}
		res.Intervals = append(res.Intervals, workload.Interval{Start: from, End: clk.Since(time.Now()), Phase: phase,
			Op: "tick", Series: "latency", Count: 1})
		if phase == workload.PhaseMeasure {
			count++
		}
	}
	res.Ops = []workload.OpSummary{{Op: "tick", Series: "latency", Count: count, Throughput: float64(count) / w.duration.Seconds()}}
	return res, nil
}

// TestFakeWorkload: the tick kind, added as one row, is a workload type the spec validates
// (and lists among the valid ones), runs as the measured workload of every run and as a
// neighbour's, with the layout step its Traits give.
func TestFakeWorkload(t *testing.T) {
	_, err := spec.Parse([]byte(strings.Replace(fakeSpecText(t), "type: tick", "type: tock", 1)), "bad.yaml",
		tickSet.Vocabulary(map[string]platform.Platform{fake.Name: fake.New(fake.Options{})}))
	if err == nil || !strings.Contains(err.Error(), `workload.type: "tock" is not valid; did you mean "tick"? (valid: ycsb, sysbench, fio, tick)`) {
		t.Errorf("a misspelt kind: %v", err)
	}
	f := newFakeOf(t, tickSet, tickWorkload, hogAxisTick, "repetitions: 2\n", fake.Options{})
	var nb *tick
	f.cfg.Neighbours = func(ns *spec.Neighbour, window time.Duration) (workload.Workload, error) {
		w, err := tickSet.Neighbour(ns, window)
		nb, _ = w.(*tick)
		return w, err
	}
	sum, err := f.run(context.Background(), false)
	if err != nil || sum.OK != 4 || sum.Failed != 0 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	for _, r := range f.rows() {
		if r.Throughput == nil || *r.Throughput <= 0 || len(r.Ops) != 1 || r.Ops[0].Op != "tick" {
			t.Errorf("run %s: the tick workload's operations are not stored: %+v", r.ID, r.Ops)
		}
	}
	if nb == nil || !nb.laidOut {
		t.Error("the neighbour's tick was not laid out before its window (Traits.Layout)")
	}
}

// tickWorkload is the fake spec's workload: the tick kind, no data set.
const tickWorkload = "workload: {type: tick, threads: 1, duration: 400ms, warmup: 100ms, interval: 100ms}"

// hogAxisTick places a neighbour running tick in half the cells.
const hogAxisTick = "  neighbour: [none, ticker]\nneighbours: {ticker: {workload: {type: tick}}}\n"

// fakeSpecText is the fake spec with the tick workload, for a parse of its own.
func fakeSpecText(t *testing.T) string {
	return newFakeOf(t, tickSet, tickWorkload, "", "", fake.Options{}).text
}
