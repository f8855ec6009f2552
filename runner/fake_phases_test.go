package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/fake"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
)

var errInjected = errors.New("injected")

// failAt is a Fault that fails point for the boxes whose request matches.
func failAt(point string, match func(platform.Request) bool) func(*atomic.Bool) func(string, platform.Request) error {
	return func(*atomic.Bool) func(string, platform.Request) error {
		return func(p string, r platform.Request) error {
			if p == point && match(r) {
				return errInjected
			}
			return nil
		}
	}
}

// notSeed matches every box but the one that loads a seed.
func notSeed(r platform.Request) bool { return !strings.HasPrefix(r.Run, "seed-") }

// A failure injected in each phase fails that run with the phase's stage and the cause in its
// reason, and every box made is torn down (fakeEnv.run checks); a teardown that fails is a
// warning on a run whose numbers stand.
func TestFakeFailureInEachPhase(t *testing.T) {
	nbSpec := "neighbours: {hog: {workload: {type: stress, cpu: 1}}}\nrepetitions: 1\n"
	for _, tc := range []struct {
		name   string
		axes   string
		fault  func(on *atomic.Bool) func(string, platform.Request) error
		nb     runner.NeighbourFactory
		status string
		reason string // the reason's start
		warn   string
	}{
		{name: "load data", fault: failAt(fake.FaultServe+":insert", func(r platform.Request) bool { return !notSeed(r) }),
			status: "failed", reason: "load data: load data into fake"},
		{name: "provision", fault: failAt(fake.FaultProvision, notSeed),
			status: "failed", reason: "provision: fake provision: injected"},
		{name: "neighbour", axes: hogAxis, fault: failAt(fake.FaultProvision, func(r platform.Request) bool { return strings.Contains(r.Run, "-nb-") }),
			status: "failed", reason: "neighbour: neighbour hog: fake provision: injected"},
		// The server stops answering once the measured window began: the generator cannot connect.
		{name: "measure", fault: func(on *atomic.Bool) func(string, platform.Request) error {
			return failAt(fake.FaultServe+":ping", func(platform.Request) bool { return on.Load() })(on)
		}, status: "failed", reason: "measure: "},
		{name: "neighbour's workload", axes: hogAxis, nb: hogs(errInjected),
			status: "failed", reason: "neighbour: neighbour hog: injected"},
		{name: "teardown", fault: failAt(fake.FaultTeardown, notSeed), status: "ok", warn: "teardown_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var on atomic.Bool
			o := fake.Options{}
			if tc.fault != nil {
				o.Fault = tc.fault(&on)
			}
			extra := "repetitions: 1\n"
			if tc.axes != "" {
				extra = nbSpec
			}
			f := newFake(t, tc.axes, extra, o)
			f.cfg.Neighbours = hogs(nil)
			if tc.nb != nil {
				f.cfg.Neighbours = tc.nb
			}
			f.cfg.Progress = &phaseHook{at: func(_ plan.Run, phase string) {
				if phase == "warmup+measure" {
					on.Store(true)
				}
			}}
			if _, err := f.run(context.Background(), false); err != nil {
				t.Fatal(err)
			}
			rows := f.rows()
			if len(rows) != 1 {
				t.Fatalf("%d runs stored", len(rows))
			}
			r := rows[0]
			if r.Status != tc.status || !strings.HasPrefix(r.Reason, tc.reason) || (tc.reason != "" && !strings.Contains(r.Reason, "injected")) {
				t.Errorf("status %s, reason %q; want %s, %q… with the cause", r.Status, r.Reason, tc.status, tc.reason)
			}
			if tc.warn != "" && !hasWarning(r, tc.warn) {
				t.Errorf("warnings %+v, want %s", r.Warnings, tc.warn)
			}
		})
	}
}

// hogAxis is a matrix axis of one neighbour, hog.
const hogAxis = "  neighbour: [hog]\n"

// hogs builds neighbours whose workload (at the workload seam) runs for the window and
// reports a rate of its own, or fails with err.
func hogs(err error) runner.NeighbourFactory {
	return func(_ *spec.Neighbour, window time.Duration) (workload.Workload, error) {
		return hog{window: window, err: err}, nil
	}
}

type hog struct {
	window time.Duration
	err    error
}

func (hog) Name() string                                { return "hog" }
func (hog) LoadKey() string                             { return "" }
func (hog) Traits() workload.Traits                     { return workload.Traits{} }
func (hog) Load(context.Context, workload.Target) error { return nil }
func (h hog) Run(ctx context.Context, _ workload.Target, _ workload.Clock) (*workload.Result, error) {
	if h.err != nil {
		return nil, h.err
	}
	select {
	case <-time.After(h.window):
	case <-ctx.Done():
	}
	return &workload.Result{Measured: h.window, Metrics: map[string]float64{"hog_loops_total": 42}}, nil
}

// Cancelled (Ctrl-C, SIGTERM) in any phase of a run, the experiment stops with
// ErrInterrupted, the run is torn down and not stored; --resume then runs it whole.
func TestFakeCancelInEachPhase(t *testing.T) {
	for _, at := range []string{"load", "provision", "quiet start", "warmup+measure", "teardown"} {
		t.Run(at, func(t *testing.T) {
			f := newFake(t, "", "repetitions: 2\n", fake.Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f.cfg.Progress = &phaseHook{at: func(run plan.Run, phase string) {
				if phase == at && run.Rep == 2 {
					cancel()
				}
			}}
			if _, err := f.run(ctx, false); !errors.Is(err, runner.ErrInterrupted) {
				t.Fatalf("err %v, want ErrInterrupted", err)
			}
			if rows := f.rows(); len(rows) != 1 || rows[0].Rep != 1 || rows[0].Status != "ok" {
				t.Fatalf("stored %+v, want run 1 only", rows)
			}
			f.cfg.Progress = nil
			sum, err := f.run(context.Background(), true)
			if err != nil || sum.OK != 2 {
				t.Fatalf("resumed: %+v, %v", sum, err)
			}
		})
	}
}

// Neighbours on the fake platform: each run has its neighbour's box (an idle one: no
// database), its workload's numbers under neighbour_<name>_, the configured and obtained
// shares, and its box's facts under its prefix.
func TestFakeNeighbours(t *testing.T) {
	f := newFake(t, hogAxis, "neighbours: {hog: {workload: {type: stress, cpu: 1}, limits: {cpuWeight: 300}}}\nlimits: {cpuWeight: 100}\nrepetitions: 1\n", fake.Options{})
	f.cfg.Neighbours = hogs(nil)
	sum, err := f.run(context.Background(), false)
	if err != nil || sum.OK != 1 {
		t.Fatalf("%+v, %v", sum, err)
	}
	r := f.rows()[0]
	m := metricsOf(t, r)
	if m[results.NeighbourMetric("hog", "hog_loops_total")] != 42 || !has(m, results.NeighbourMetric("hog", "ops_per_second")) {
		t.Errorf("neighbour metrics missing: %v", m)
	}
	if got := m[results.ShareMetric("cpu", false)]; got != 0.25 {
		t.Errorf("configured cpu share %v, want 100/(100+300)", got)
	}
	if r.Facts[results.NeighbourPrefix+"hog_platform_fake"] != "in memory" {
		t.Errorf("neighbour facts: %v", r.Facts)
	}
}

func has(m map[string]float64, k string) bool {
	_, ok := m[k]
	return ok
}
