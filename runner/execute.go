package runner

import (
	"context"
	"errors"
	"github.com/boxbench/boxbench/agent"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/recovery"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

// measureGrace is how long a workload may overrun warm-up + duration before it is cancelled;
// abandonGrace is how long a cancelled workload may take to return before the run fails
// without it (a load generator that ignores cancellation must not hang the experiment).
// Variables so that tests can shorten them.
var (
	measureGrace = 2 * time.Minute
	abandonGrace = 30 * time.Second
)

// aliveTimeout bounds the check, after the workload, that the database still answers;
// aliveTimeoutEmulated for a box whose CPU is emulated (platform.Traits.Emulated), where a
// connection with SCRAM authentication alone takes seconds.
const (
	aliveTimeout         = 5 * time.Second
	aliveTimeoutEmulated = 60 * time.Second
)

// runState is one run as its phases fill it in: each phase reads what the earlier ones left
// and adds its own; analyse derives the run's metrics and warnings from the whole.
type runState struct {
	run  plan.Run
	cell *plan.Cell
	slot slot
	rec  *results.RunRecord
	wl   workload.Workload // the cell's; at a client site, its remote form
	// remote is wl's remote form when the client runs at a client site, else nil.
	remote *agent.Remote

	d    dbms.DBMS         // the cell's database, with this run's own password
	p    platform.Platform // the cell's platform
	seed SeedInfo
	lim  resource.Limits // the box's limits as requested (a duet side's cpuset in it)
	box  platform.Box
	nbs  []*neighbour

	hostMetrics  map[string]float64 // what the quiet start measured
	res          *workload.Result   // the measured window's
	samples      []telemetry.Sample
	missing      []string // what telemetry could not see
	inGroup      []string // the components of box parts inside the database's group
	partsMissing []string // why a box's parts could not be named
	srv          serverOutcome
}

// phase is one step of a run. A phase that fails returns its error (a *stageError to name
// another stage than its own); errInterruptedRun ends the run without a failure (the caller
// discards the record).
type phase struct {
	name string
	do   func(context.Context, *runState) error
}

// stageError is a phase's failure recorded under another stage's name (a duet's gate in the
// quiet start, a missing platform while resolving the database).
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.stage + ": " + e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// errInterruptedRun: ctx ended while a phase waited; not a failure.
var errInterruptedRun = errors.New("run interrupted")

// phases are the life of a run, in order. Teardown is not one: it runs on every exit path.
func (r *Runner) phases() []phase {
	return []phase{
		{"dbms", r.resolve},
		{"load data", r.loadSeed},
		{"provision", r.provisionBox},
		{"neighbour", r.startNeighbours},
		{"client", r.placeClient},
		{"quiet start", r.quietStart},
		{"measure", r.measureWindow},
		{"analysis", r.analyse},
	}
}

// execute performs one run and returns its record. It never returns without tearing the box
// down. When ctx is cancelled the record is incomplete and the caller discards it. A panic in
// the run (after the box's deferred teardowns ran) is a failed run whose reason holds the
// panic and its stack; the experiment goes on with the next run.
func (r *Runner) execute(ctx context.Context, run plan.Run, wl workload.Workload, slot slot) *results.RunRecord {
	rec := &results.RunRecord{ID: run.ID(), CellID: run.Cell.ID, Rep: run.Rep, Started: time.Now(),
		Env: map[string]string{}, Facts: map[string]string{}, ClientCPUs: r.clientCPUs}
	for k, v := range r.env {
		rec.Env[k] = v
	}
	s := &runState{run: run, cell: run.Cell, slot: slot, rec: rec, wl: wl}
	err := recovery.Call("run "+rec.ID, func() error { r.perform(ctx, s); return nil })
	if err != nil {
		rec.Status, rec.Reason = "failed", err.Error()
		r.cfg.Log.Error("run panicked", "run", rec.ID, "err", err)
	}
	if rec.Status != "ok" {
		slot.duet.abandon(rec.ID + " " + rec.Reason) // a partner waiting at a gate fails too
	}
	rec.Ended = time.Now()
	return rec
}

// perform is execute's body: the phases in order, the first failure recorded with its stage,
// the boxes torn down on every path.
func (r *Runner) perform(ctx context.Context, s *runState) {
	defer r.teardown(ctx, s)
	for _, ph := range r.phases() {
		err := ph.do(ctx, s)
		if errors.Is(err, errInterruptedRun) {
			return
		}
		if err != nil {
			stage := ph.name
			var se *stageError
			if errors.As(err, &se) {
				stage, err = se.stage, se.err
			}
			r.fail(s.rec, stage, err)
			return
		}
	}
}

// fail records the run as failed at stage, naming a full disk under the work root as the cause.
func (r *Runner) fail(rec *results.RunRecord, stage string, err error) {
	rec.Status, rec.Reason = "failed", stage+": "+err.Error()
	if full := diskFull(err, r.cfg.WorkRoot); full != "" {
		rec.Reason = stage + ": " + full + ": " + err.Error()
	}
	r.cfg.Log.Warn("run failed", "run", rec.ID, "stage", stage, "err", err)
}

// teardown removes the neighbours, then the box (whichever were made), each failure a warning
// on the run: its numbers stand, leftovers are doctor --cleanup's.
// Each has its own TeardownContext (its own deadline).
func (r *Runner) teardown(ctx context.Context, s *runState) {
	if s.box == nil {
		return // nothing was provisioned, neighbours included
	}
	tctx, cancel := platform.TeardownContext(ctx)
	err := teardownNeighbours(tctx, s.nbs)
	cancel()
	if err != nil {
		s.rec.Warnings = append(s.rec.Warnings, results.Warning{Code: "teardown_failed", Severity: "error",
			Message: "tearing a neighbour down failed: " + err.Error()})
	}
	r.cfg.Progress.Phase(s.run, "teardown")
	tctx, cancel = platform.TeardownContext(ctx)
	defer cancel()
	if err := s.box.Teardown(tctx); err != nil {
		s.rec.Warnings = append(s.rec.Warnings, results.Warning{Code: "teardown_failed", Severity: "error",
			Message: "tearing the box down failed; leftovers may remain (boxbench doctor --cleanup removes them): " + err.Error()})
	}
}
