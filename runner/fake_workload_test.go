package runner_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/builtin/workloads"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/fake"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/spec/section"
	"github.com/boxbench/boxbench/workload"
)

// The recipe of docs/architecture.md, "Writing a workload", walked in one place: a kind of
// workload of its own (tick, below) and one row of the table of kinds (tickKind, added with
// builtin.Set.WithWorkloads as the fake database is added with builtin.With). Nothing else
// changes: the spec takes it as a workload type and as a neighbour's, the runner runs it on the
// fake platform, measured and beside the database, and learns what it can do from its Traits.

// tickKind is the row: what the spec may name, how a cell's workload is built, and its own
// field beats, which its section decodes and checks (Own), the spec and spec.Workload
// unchanged.
var tickKind = builtin.WorkloadKind{Name: "tick",
	Build: func(_ *spec.Experiment, w *spec.Workload, _ workloads.Cell, _ workloads.Env) (workload.Workload, error) {
		return &tick{duration: w.Duration.D(), warmup: w.Warmup.D(), interval: w.Interval.D(), threads: w.Threads,
			beats: tickOf(w).Beats}, nil
	},
	Neighbour: func(w *spec.Workload, window time.Duration) (workload.Workload, error) {
		return &tick{duration: window, interval: window, threads: 1, beats: tickOf(w).Beats}, nil
	},
	Own: &spec.OwnKind{Fields: section.Fields(reflect.TypeOf(tickSection{})), YAML: decodeTick,
		JSON: func(b []byte) (spec.Own, error) {
			var s tickSection
			return s, json.Unmarshal(b, &s)
		}},
}

// tickSection is the tick kind's own section of a workload: beats, the operations of each
// interval (default 1).
type tickSection struct {
	Beats int `yaml:"beats"`
}

// Sweep: no sweep key sets a field of the section.
func (s tickSection) Sweep(string, string) (spec.Own, bool) { return s, false }

// decodeTick decodes and checks the section, as a platform does its own.
func decodeTick(n *yaml.Node, at string, _ section.Common) (spec.Own, []spec.Problem) {
	s := tickSection{Beats: 1}
	ps := section.Decode(n, at, &s)
	c := section.NewChecker(n, at)
	if s.Beats < 1 || s.Beats > 1000 {
		c.Add(at+".beats", "%d is out of range (valid: 1 to 1000 operations an interval)", s.Beats)
	}
	return s, append(ps, c.Problems...)
}

// tickOf is a tick workload's own section, as the row decoded it.
func tickOf(w *spec.Workload) tickSection {
	s, _ := w.Own.(tickSection)
	return s
}

// tickSet is fakeSet with the tick row.
var tickSet = fakeSet.WithWorkloads(tickKind)

// tick counts intervals: one operation per interval, for warm-up and the measured window. It
// needs no data set and connects to nothing; it says when its window starts (its Traits), so
// the runner reads the database's own counters then.
type tick struct {
	duration, warmup, interval time.Duration
	threads, beats             int
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
			Op: "tick", Series: "latency", Count: int64(w.beats)})
		if phase == workload.PhaseMeasure {
			count += int64(w.beats)
		}
	}
	res.Ops = []workload.OpSummary{{Op: "tick", Series: "latency", Count: count, Throughput: float64(count) / w.duration.Seconds()}}
	return res, nil
}

// TestFakeWorkload: the tick kind, added as one row, is a workload type the spec validates
// (and lists among the valid ones), with a field of its own its row decodes and checks; it
// runs as the measured workload of every run and as a neighbour's, with the layout step its
// Traits give, and its field reaches a workload built from the experiment as an agent's job
// carries it (JSON).
func TestFakeWorkload(t *testing.T) {
	v := tickSet.Vocabulary(map[string]platform.Platform{fake.Name: fake.New(fake.Options{})})
	for edit, want := range map[string]string{
		"type: tock":              `workload.type: "tock" is not valid; did you mean "tick"? (valid: ycsb, sysbench, fio, tick)`,
		"type: tick, beats: 0":    `line 5: workload.beats: 0 is out of range (valid: 1 to 1000 operations an interval)`,
		"type: tick, beats: many": `line 5: workload.beats: "many" is text, but a whole number is expected here`,
		"type: tick, beets: 2":    `line 5: workload.beets: unknown field "beets" (did you mean "beats"?); valid here: type, threads,`,
		"type: ycsb, beats: 2":    `line 5: workload.beats: applies to workload type tick only, but this workload is ycsb`,
	} {
		text := strings.Replace(strings.Replace(fakeSpecText(t), ", beats: 3", "", 1), "type: tick", edit, 1)
		if _, err := spec.Parse([]byte(text), "bad.yaml", v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", edit, err, want)
		}
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
		if r.Throughput == nil || *r.Throughput <= 0 || len(r.Ops) != 1 || r.Ops[0].Op != "tick" || r.Ops[0].Count%3 != 0 {
			t.Errorf("run %s: the tick workload's operations are not stored: %+v", r.ID, r.Ops)
		}
	}
	if nb == nil || !nb.laidOut || nb.beats != 2 {
		t.Errorf("the neighbour's tick was not laid out before its window (Traits.Layout), or not with its beats: %+v", nb)
	}
	// The experiment as an agent's job carries it: the own section travels as JSON and the
	// row decodes it.
	b, err := json.Marshal(f.cfg.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var carried spec.Experiment
	if err := json.Unmarshal(b, &carried); err != nil {
		t.Fatal(err)
	}
	for _, e := range []*spec.Experiment{f.cfg.Spec, &carried} {
		w, err := tickSet.Workload(e, &plan.Cell{Workload: ""})
		if tw, _ := w.(*tick); err != nil || tw == nil || tw.beats != 3 {
			t.Errorf("a cell's tick is not built with its beats: %+v, %v", w, err)
		}
	}
}

// tickWorkload is the fake spec's workload: the tick kind, three operations an interval, no
// data set.
const tickWorkload = "workload: {type: tick, threads: 1, duration: 400ms, warmup: 100ms, interval: 100ms, beats: 3}"

// hogAxisTick places a neighbour running tick in half the cells.
const hogAxisTick = "  neighbour: [none, ticker]\nneighbours: {ticker: {workload: {type: tick, beats: 2}}}\n"

// fakeSpecText is the fake spec with the tick workload, for a parse of its own.
func fakeSpecText(t *testing.T) string {
	return newFakeOf(t, tickSet, tickWorkload, "", "", fake.Options{}).text
}
