package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/boxbench/boxbench/cgroup"
	"github.com/boxbench/boxbench/check"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/placement"
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
	defer func() {
		rec.Ended = time.Now()
		// Doubts about the box itself (an image whose database version differs from native, a
		// share the kernel cannot enforce) are recorded as warning_* facts; they belong with
		// the run's warnings.
		for _, k := range slices.Sorted(maps.Keys(rec.Facts)) {
			if strings.HasPrefix(k, "warning_") {
				rec.Warnings = append(rec.Warnings, results.Warning{Code: strings.TrimPrefix(k, "warning_"), Severity: "warning", Message: rec.Facts[k]})
			}
		}
	}()
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

	rec.LimitsApplied = box.Applied()

	r.applyShares(box, e.Limits, rec.Facts, "")
	ws := e.WorkloadOf(c.Workload)
	window := e.Telemetry.Interval.D() + ws.Warmup.D() + ws.Duration.D()
	nbs, err := r.provisionNeighbours(ctx, c, d, fmt.Sprintf("%s/%s", r.cfg.WorkRoot, r.id), r.seq+1, window)
	defer func() {
		if err := teardownNeighbours(context.WithoutCancel(ctx), nbs); err != nil {
			rec.Warnings = append(rec.Warnings, results.Warning{Code: "teardown_failed", Severity: "error",
				Message: "tearing a neighbour down failed: " + err.Error()})
		}
	}()
	if err != nil {
		return fail("neighbour", err)
	}
	for _, n := range nbs {
		r.applyShares(n.box, n.spec.Limits, rec.Facts, "neighbour_"+n.name+"_")
		for k, v := range n.box.Facts() {
			rec.Facts["neighbour_"+n.name+"_"+k] = v
		}
	}

	r.cfg.Progress.Phase(run, "warmup+measure")
	res, samples, err := r.measure(ctx, box, d, wl, ws, nbs, c.ClientPolicy, rec.Env)
	rec.Result = res
	for _, s := range samples {
		rec.Series = append(rec.Series, results.Point{T: s.T, Source: s.Source, Metric: s.Metric, Label: s.Label, Value: s.Value})
	}
	if err != nil {
		rec.LogTail = box.LogTail(4096)
		return fail("measure", err)
	}
	if err := r.neighbourResults(res, samples, nbs); err != nil {
		return fail("neighbour", err)
	}
	rec.Status = "ok"
	rec.Warnings = append(rec.Warnings, r.validity(c, res, samples, box, lim)...)
	return rec
}

// measure samples telemetry for one interval before the workload starts (the pre-run host
// state) and through the whole workload, on one clock. The workload runs under the client
// policy given; env["client_policy"] records the policy the kernel reports for the client then.
func (r *Runner) measure(ctx context.Context, box platform.Box, d dbms.DBMS, wl workload.Workload, ws *spec.Workload,
	nbs []*neighbour, policy string, env map[string]string) (*workload.Result, []telemetry.Sample, error) {
	e := r.cfg.Spec
	clk := workload.Clock{Start: time.Now()}
	ref := box.Cgroup()
	targets := []telemetry.Target{
		{Source: "db", Cgroup: &ref, DataDir: box.Facts()["host_data_dir"]},
		{Source: "client", PID: os.Getpid()},
		{Source: "host", Host: true},
	}
	for _, n := range nbs {
		nref := n.box.Cgroup()
		targets = append(targets, telemetry.Target{Source: n.source(), Cgroup: &nref, DataDir: n.box.Facts()["host_data_dir"]})
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
	// Neighbours start with the measured workload (after the pre-run interval, so that it
	// still shows the quiet host) and run to the end of the measured window.
	for _, n := range nbs {
		n.start(wctx, clk, r.cfg.Log)
	}
	// The client's scheduling policy covers the workload only: servers and neighbours started
	// before keep theirs, and the native platform resets it for whatever it starts meanwhile.
	var res *workload.Result
	restore, werr := placement.SetPolicy(policy)
	if werr == nil {
		if env["client_policy"], werr = placement.Policy(0); werr == nil {
			res, werr = wl.Run(wctx, t, clk)
		}
		if err := restore(); err != nil {
			r.cfg.Log.Warn("restoring the client's scheduling policy", "err", err)
		}
	}
	for _, n := range nbs {
		n.wait()
	}
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

// applyShares writes a box's weights and I/O limits (and, on cgroup v1, the rule that makes its
// block I/O counted) into its cgroup, and records what took effect under prefix.
func (r *Runner) applyShares(box platform.Box, l spec.Limits, facts map[string]string, prefix string) {
	sh := cgroup.Shares{CPUWeight: l.CPUWeight, IOWeight: l.IOWeight, ReadBps: int64(l.ReadBps),
		WriteBps: int64(l.WriteBps), ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS}
	if dev, err := telemetry.ResolveDevice(box.Facts()["host_data_dir"]); err == nil {
		sh.Device = cgroup.DeviceOf(dev.Major, dev.Minor)
	}
	done, err := cgroup.ApplyShares(box.Cgroup(), sh)
	for k, v := range done {
		facts[prefix+k] = v
		if strings.HasPrefix(v, "not ") {
			facts["warning_"+prefix+k+"_not_enforced"] = k + " " + v
		}
	}
	if err != nil {
		facts["warning_"+prefix+"shares_failed"] = "applying weights or I/O limits failed: " + err.Error()
	}
}

// neighbourResults adds the neighbours' own throughput and the configured-versus-obtained
// shares to the run's metrics. A neighbour that failed fails the run: without it the cell
// measured something else.
func (r *Runner) neighbourResults(res *workload.Result, samples []telemetry.Sample, nbs []*neighbour) error {
	if len(nbs) == 0 {
		return nil
	}
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	after := r.cfg.Spec.Telemetry.Interval.D() + res.Warmup
	for k, v := range shareMetrics(samples, after, r.cfg.Spec.Limits, nbs) {
		res.Metrics[k] = v
	}
	for _, n := range nbs {
		if n.err != nil {
			return fmt.Errorf("neighbour %s: %w", n.name, n.err)
		}
		if n.res == nil {
			continue
		}
		for k, v := range n.res.Metrics {
			res.Metrics["neighbour_"+n.name+"_"+k] = v
		}
		var ops float64
		for _, o := range n.res.Ops {
			if o.Series == "latency" {
				ops += o.Throughput
			}
		}
		res.Metrics["neighbour_"+n.name+"_ops_per_second"] = ops
	}
	return nil
}

// validity turns the run's facts into warnings.
func (r *Runner) validity(c *plan.Cell, res *workload.Result, samples []telemetry.Sample, box platform.Box, lim platform.Limits) []results.Warning {
	interval := r.cfg.Spec.Telemetry.Interval.D()
	cores := float64(runtime.NumCPU())
	if pinned := r.env["client_cpus"]; pinned != "" {
		cores = float64(strings.Count(pinned, ",") + 1)
	}
	f := check.Facts{Wall: res.Measured, ClientCPU: res.ClientCPU, ClientCores: cores,
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
