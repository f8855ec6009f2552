package runner

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/platformtest"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
)

// hung wraps the real workload; its first Run ignores cancellation until the test ends.
type hung struct {
	workload.Workload
	calls   *atomic.Int64
	release chan struct{}
}

func (h hung) Run(ctx context.Context, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	if h.calls.Add(1) == 1 {
		<-h.release
		return nil, nil
	}
	return h.Workload.Run(ctx, t, clk)
}

// A load generator that does not return after its deadline fails its run (bounded by the
// workload's timeout plus abandonGrace); the box is torn down and the next run is ok.
func TestHungWorkloadFailsTheRun(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server")
	defer func(m, a time.Duration) { measureGrace, abandonGrace = m, a }(measureGrace, abandonGrace)
	measureGrace, abandonGrace = time.Second, time.Second
	text := strings.Replace(strings.Replace(SmallSpec, "runner-panic", "runner-hung", 1), "repetitions: 3", "repetitions: 2", 1)
	work, out := testenv.WorkRoot(t), t.TempDir()
	log := slog.New(slog.DiscardHandler)
	ps := map[string]platform.Platform{"native": builtin.Platforms(log)["native"]}
	e, err := spec.Parse([]byte(text), "hung.yaml", builtin.Vocabulary(ps))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int64
	wf := func(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
		w, err := builtin.Workload(e, c)
		return hung{w, &calls, release}, err
	}
	sum, err := Run(context.Background(), Config{Spec: e, SpecText: []byte(text), OutDir: out, WorkRoot: work,
		Platforms: ps, Workloads: wf, Neighbours: builtin.Neighbour, DBMS: builtin.DBMS,
		Check: builtin.Checker(ps, false), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	st, err := results.OpenExisting(out)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, _ := st.Runs()
	if len(rows) != 2 || rows[0].Status != "failed" || !strings.Contains(rows[0].Reason, "did not stop") || rows[1].Status != "ok" {
		for _, r := range rows {
			t.Logf("%s %s %q", r.ID, r.Status, r.Reason)
		}
		t.Fatalf("want the hung run failed and the next ok: %+v", sum)
	}
	if left := platformtest.HostLeftovers(work, sum.ExperimentID); len(left) > 0 {
		t.Errorf("leftovers: %v", left)
	}
}
