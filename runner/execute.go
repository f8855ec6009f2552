package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/boxbench/boxbench/check"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

// measureGrace is how long a workload may overrun warm-up + duration before it is cancelled.
const measureGrace = 2 * time.Minute

// execute performs one run and returns its record. It never returns without tearing the box
// down. When ctx is cancelled the record is incomplete and the caller discards it.
func (r *Runner) execute(ctx context.Context, run plan.Run, wl workload.Workload) *results.RunRecord {
	c := run.Cell
	e := r.cfg.Spec
	rec := &results.RunRecord{ID: run.ID(), CellID: c.ID, Rep: run.Rep, Started: time.Now(),
		Env: map[string]string{}, Facts: map[string]string{}}
	for k, v := range r.env {
		rec.Env[k] = v
	}
	defer func() { rec.Ended = time.Now() }()
	fail := func(stage string, err error) *results.RunRecord {
		rec.Status, rec.Reason = "failed", stage+": "+err.Error()
		r.cfg.Log.Warn("run failed", "run", rec.ID, "stage", stage, "err", err)
		return rec
	}
	d, err := dbms.Get(c.DBMS)
	if err != nil {
		return fail("dbms", err)
	}
	p := r.cfg.Platforms[c.Platform]
	if p == nil {
		return fail("platform", fmt.Errorf("platform %q is not available in this build", c.Platform))
	}

	r.cfg.Progress.Phase(run, "load")
	lctx, cancel := context.WithTimeout(ctx, e.Timeouts.Load.D())
	seed, err := r.seeds.Get(lctx, d, wl)
	cancel()
	if err != nil {
		return fail("load data", err)
	}
	if seed.Loaded {
		_ = r.store.Event("load", fmt.Sprintf("seed %s for %s loaded in %s", seed.Key, c.ID, seed.Took.Round(time.Millisecond)))
	}
	for k, v := range envOfDBMS(ctx, d) {
		rec.Env[k] = v
	}

	r.cfg.Progress.Phase(run, "provision")
	lim := limitsOf(e)
	rec.LimitsRequested = lim
	pctx, cancel := context.WithTimeout(ctx, e.Timeouts.Provision.D())
	box, err := p.Provision(pctx, platform.Request{Experiment: r.id, Run: runDirName(r.seq + 1),
		WorkDir: fmt.Sprintf("%s/%s/%s", r.cfg.WorkRoot, r.id, runDirName(r.seq+1)), DBMS: d,
		Choice: platform.Choice{Storage: c.Storage, Network: c.Network, Runtime: c.Runtime},
		Limits: lim, StorageOpts: storageOpts(e), Seed: seed.Dir, Log: r.cfg.Log})
	cancel()
	if err != nil {
		return fail("provision", err)
	}
	defer func() {
		r.cfg.Progress.Phase(run, "teardown")
		if err := box.Teardown(context.WithoutCancel(ctx)); err != nil {
			rec.Warnings = append(rec.Warnings, results.Warning{Code: "teardown_failed", Severity: "error",
				Message: "tearing the box down failed; leftovers may remain (boxbench doctor --cleanup removes them): " + err.Error()})
		}
	}()
	rec.Facts = box.Facts()
	rec.Facts["seed"] = seed.Key
	// Platforms record doubts about the box itself (e.g. an image whose database version
	// differs from native) as warning_* facts; they belong with the run's warnings.
	for k, v := range rec.Facts {
		if strings.HasPrefix(k, "warning_") {
			rec.Warnings = append(rec.Warnings, results.Warning{Code: strings.TrimPrefix(k, "warning_"), Severity: "warning", Message: v})
		}
	}
	rec.LimitsApplied = box.Applied()

	r.cfg.Progress.Phase(run, "warmup+measure")
	res, samples, err := r.measure(ctx, box, d, wl, e.WorkloadOf(c.Workload))
	rec.Result = res
	for _, s := range samples {
		rec.Series = append(rec.Series, results.Point{T: s.T, Source: s.Source, Metric: s.Metric, Label: s.Label, Value: s.Value})
	}
	if err != nil {
		rec.LogTail = box.LogTail(4096)
		return fail("measure", err)
	}
	rec.Status = "ok"
	rec.Warnings = append(rec.Warnings, r.validity(c, res, samples, box, lim)...)
	return rec
}

// measure samples telemetry for one interval before the workload starts (the pre-run host
// state) and through the whole workload, on one clock.
func (r *Runner) measure(ctx context.Context, box platform.Box, d dbms.DBMS, wl workload.Workload, ws *spec.Workload) (*workload.Result, []telemetry.Sample, error) {
	e := r.cfg.Spec
	clk := workload.Clock{Start: time.Now()}
	ref := box.Cgroup()
	targets := []telemetry.Target{
		{Source: "db", Cgroup: &ref, DataDir: box.Facts()["host_data_dir"]},
		{Source: "client", PID: os.Getpid()},
		{Source: "host", Host: true},
	}
	sampler, err := telemetry.New(targets, e.Telemetry.Interval.D(), clk, r.cfg.Log)
	if err != nil {
		// Telemetry is not optional: a run without its resource story is not reported.
		return nil, nil, fmt.Errorf("telemetry: %w", err)
	}
	if err := sampler.Start(ctx); err != nil {
		return nil, nil, fmt.Errorf("telemetry: %w", err)
	}
	select {
	case <-time.After(e.Telemetry.Interval.D() + 50*time.Millisecond):
	case <-ctx.Done():
	}
	cred := d.Client()
	t := workload.Target{DBMS: d.Name(), Endpoint: box.Endpoint(), User: cred.User, Database: cred.Database,
		Box: box, DataDir: box.DataDir(), Log: r.cfg.Log}
	wctx, cancel := context.WithTimeout(ctx, ws.Warmup.D()+ws.Duration.D()+measureGrace)
	res, werr := wl.Run(wctx, t, clk)
	cancel()
	samples, serr := sampler.Stop()
	if serr != nil {
		r.cfg.Log.Warn("telemetry incomplete", "err", serr)
	}
	if werr == nil && res == nil {
		werr = errors.New("workload returned no result")
	}
	return res, samples, werr
}

// validity turns the run's facts into warnings.
func (r *Runner) validity(c *plan.Cell, res *workload.Result, samples []telemetry.Sample, box platform.Box, lim platform.Limits) []results.Warning {
	interval := r.cfg.Spec.Telemetry.Interval.D()
	f := check.Facts{Wall: res.Measured, ClientCPU: res.ClientCPU, ClientCores: float64(runtime.NumCPU()),
		DBSource: "db", Dataset: c.Bound, WarmupEnd: interval + res.Warmup,
		Spec: telemetry.Limits{CPUs: lim.CPUs, Cpuset: lim.Cpuset, MemoryBytes: lim.MemoryBytes}}
	a := box.Applied()
	f.Applied = &telemetry.Limits{CPUs: a.CPUs, Cpuset: a.Cpuset, MemoryBytes: a.MemoryBytes}
	if lim.Cpuset == "" {
		f.Applied.Cpuset = "" // an unpinned group inherits every cpu; not a difference
	}
	for _, o := range res.Ops {
		if o.Series == "latency" {
			f.Ops = append(f.Ops, check.OpCount{Op: o.Op, Count: o.Count, Errors: o.Errors})
		}
	}
	for _, s := range samples {
		if s.T <= interval+50*time.Millisecond {
			f.PreRun = append(f.PreRun, s)
		} else {
			f.Samples = append(f.Samples, s)
		}
	}
	var out []results.Warning
	for _, w := range check.Evaluate(f, check.DefaultThresholds()) {
		out = append(out, results.Warning{Code: w.Code, Severity: string(w.Severity), Message: w.Message})
	}
	return out
}
