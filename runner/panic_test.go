package runner_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/platformtest"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
)

// panicky wraps the real workload; its first Run (run 2's) panics (a bug in the client's goroutine).
type panicky struct {
	workload.Workload
	calls *atomic.Int64
}

func (p panicky) Run(ctx context.Context, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	if p.calls.Add(1) == 1 { // run 1 never reaches the workload
		panic("workload bug")
	}
	return p.Workload.Run(ctx, t, clk)
}

// phasePanic panics when the first run enters its measured phase: after the box was
// provisioned, outside the workload, in the runner's own goroutine.
type phasePanic struct{ fired atomic.Bool }

func (*phasePanic) Begin(int, int) {}
func (*phasePanic) Add(int)        {}
func (p *phasePanic) Phase(_ plan.Run, phase string) {
	if phase == "warmup+measure" && p.fired.CompareAndSwap(false, true) {
		panic("progress bug")
	}
}
func (*phasePanic) End(plan.Run, string, string) {}
func (*phasePanic) Finish()                      {}

// A panic in the runner's goroutine (run 1) and in the workload (run 2) each end their run as
// failed with the panic and its stack in the reason; the box is torn down; run 3 is ok.
func TestPanicsFailTheRun(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server")
	work, out := testenv.WorkRoot(t), t.TempDir()
	log := slog.New(slog.DiscardHandler)
	ps := map[string]platform.Platform{"native": builtin.Platforms(log)["native"]}
	e, err := spec.Parse([]byte(runner.SmallSpec), "panic.yaml", builtin.Vocabulary(ps))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	wf := func(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
		w, err := builtin.Workload(e, c)
		return panicky{w, &calls}, err
	}
	sum, err := runner.Run(context.Background(), runner.Config{Spec: e, SpecText: []byte(runner.SmallSpec), OutDir: out,
		WorkRoot: work, Platforms: ps, Workloads: wf, Neighbours: builtin.Neighbour, DBMS: builtin.DBMS,
		Check: builtin.Checker(ps, false), Log: log, Progress: &phasePanic{}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK != 1 || sum.Failed != 2 {
		t.Errorf("want 1 ok and 2 failed runs, got %+v", sum)
	}
	rows := storedRuns(t, out)
	want := []struct{ status, reason string }{{"failed", "progress bug"}, {"failed", "workload bug"}, {"ok", ""}}
	for i, row := range rows {
		if i >= len(want) {
			break
		}
		if row.Status != want[i].status || !strings.Contains(row.Reason, want[i].reason) ||
			(want[i].reason != "" && !strings.Contains(row.Reason, "goroutine")) {
			t.Errorf("run %d: status %s, reason %q; want %s with %q and a stack", i+1, row.Status, row.Reason, want[i].status, want[i].reason)
		}
	}
	if left := platformtest.HostLeftovers(work, sum.ExperimentID); len(left) > 0 {
		t.Errorf("leftovers after panics: %v", left)
	}
}
