package runner

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/boxbench/boxbench/attribution"
	"github.com/boxbench/boxbench/check"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

// analyse is the one post-run step that derives the run's metrics and warnings from its
// measured window (nothing is measured here): the neighbours' results and shares (a neighbour
// that failed fails the run: without it the cell measured something else), the server's own
// counters, the validity checks, the steady-state cut, the quiet start's and each node's
// metrics, the host's softirq CPU per operation. The order matters: the checks read the
// whole window as the workload ran it, before the steady-state cut.
func (r *Runner) analyse(_ context.Context, s *runState) error {
	res, rec := s.res, s.rec
	if err := r.neighbourResults(res, s.samples, s.nbs, s.lim); err != nil {
		return &stageError{"neighbour", err}
	}
	rec.Status = "ok"
	rec.Warnings = append(rec.Warnings, serverResult(s.srv, res, rec.Facts)...)
	rec.Warnings = append(rec.Warnings, r.validity(s.cell, res, s.samples, s.box, s.lim, rec.ClientCPUs)...)
	r.steadyState(res, rec)
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	for k, v := range s.hostMetrics {
		res.Metrics[k] = v
	}
	interval := r.cfg.Spec.Telemetry.Interval.D()
	for k, v := range nodeMetrics(s.box, s.samples, interval+res.Warmup) {
		res.Metrics[k] = v
	}
	if v, ok := softirqPerOp(s.samples, interval, res); ok {
		res.Metrics[MetricSoftirqPerOp] = v
	}
	r.whereTheTimeGoes(s)
	if len(s.missing) > 0 {
		rec.Facts["telemetry_missing"] = strings.Join(s.missing, "; ")
	}
	return nil
}

// whereTheTimeGoes accounts the host's busy CPU of the measured window to the components that
// did the work, per operation (attribution.Account), into the result's metrics; what could not
// be measured and what kernel.interrupts holds into the run's facts; a run whose other tasks
// took a large share of the busy CPU is warned about (check's cpu_unaccounted).
func (r *Runner) whereTheTimeGoes(s *runState) {
	w, ok := measuredWindow(r.cfg.Spec.Telemetry.Interval.D(), s.res)
	if !ok {
		return
	}
	src := attribution.Sources{InGroup: s.inGroup, NotMeasured: s.partsMissing}
	for i, n := range platform.NodesOf(s.box) {
		src.DB = append(src.DB, results.NodeSource(i, n.Name))
	}
	if len(src.DB) == 0 {
		src.DB = []string{results.SourceDB}
	}
	for _, n := range s.nbs {
		src.Neighbours = append(src.Neighbours, attribution.Neighbour{Source: n.source(), Name: n.name})
	}
	if s.remote == nil {
		src.Client = "client" // at a client site, its CPU is in other.processes or elsewhere
	}
	b := attribution.Account(s.samples, w, src)
	for k, v := range b.Metrics {
		s.res.Metrics[k] = v
	}
	if len(b.NotMeasured) > 0 {
		s.rec.Facts[results.FactNotAccounted] = strings.Join(b.NotMeasured, "; ")
	}
	if b.OK {
		s.rec.Facts[results.FactInterrupts] = attribution.Interrupts()
		for _, w := range check.Unaccounted(b.Busy, b.Other, check.DefaultThresholds()) {
			s.rec.Warnings = append(s.rec.Warnings, results.Warning{Code: w.Code, Severity: string(w.Severity), Message: w.Message})
		}
	}
}

// neighbourResults adds the neighbours' own throughput and the configured-versus-obtained
// shares to the run's metrics. A neighbour that failed fails the run: without it the cell
// measured something else.
func (r *Runner) neighbourResults(res *workload.Result, samples []telemetry.Sample, nbs []*neighbour, victim resource.Limits) error {
	if len(nbs) == 0 {
		return nil
	}
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	after := r.cfg.Spec.Telemetry.Interval.D() + res.Warmup
	for k, v := range shareMetrics(samples, after, victim, nbs) {
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
			res.Metrics[results.NeighbourMetric(n.name, k)] = v
		}
		res.Metrics[results.NeighbourMetric(n.name, "ops_per_second")] = n.res.Throughput()
	}
	return nil
}

// validity turns the run's facts into warnings. clientCPUs are the cpus this run's client was
// pinned to (RunRecord.ClientCPUs: boxbench's own pin, or its site's; "" when unpinned).
func (r *Runner) validity(c *plan.Cell, res *workload.Result, samples []telemetry.Sample, box platform.Box, lim resource.Limits,
	clientCPUs string) []results.Warning {
	interval := r.cfg.Spec.Telemetry.Interval.D()
	// The client's own account of its cpus first: it read its affinity wherever it ran (a
	// container, a pod, a duet side's agent).
	cores := float64(runtime.NumCPU())
	if res.ClientCPUs > 0 {
		cores = float64(res.ClientCPUs)
	} else if pinned, err := placement.ParseList(clientCPUs); err == nil && len(pinned) > 0 {
		cores = float64(len(pinned)) // "0-1" from a site, "0,1" from placement.Pin
	}
	f := check.Facts{Wall: res.Measured, ClientCPU: res.ClientCPU, ClientCPUWall: res.ClientCPUWall, ClientCores: cores,
		DBSource: "db", Dataset: c.Bound, WarmupEnd: interval + res.Warmup,
		Spec: lim, Baseline: &lim}
	// The baseline's own request: a CPU limit both ask for is the design, one that differs is
	// what db_cpu_throttled warns about (a cell compared with nothing keeps its own).
	if b := r.plan.Baseline[c]; b != nil && b != c {
		f.Baseline = &b.Resources
	}
	if d, err := r.cfg.DBMS(c.DBMS); err == nil {
		f.ServerRules = d.Traits().WindowRules
		if s := d.Traits().ScansPerKey; s != nil {
			f.ScansPerKey, f.ScansPerKeyCode = s.Why, s.Code
		}
	}
	a := box.Applied().Limits
	if lim.Cpuset == "" {
		a.Cpuset = "" // an unpinned group inherits every cpu; not a difference
	}
	f.Applied = &a
	// A box of several: every node's own telemetry and read-back limits are checked.
	for i, n := range platform.NodesOf(box) {
		na := n.Box.Applied().Limits
		if lim.Cpuset == "" {
			na.Cpuset = ""
		}
		f.Nodes = append(f.Nodes, check.Node{Name: n.Name, Source: results.NodeSource(i, n.Name), Applied: &na})
	}
	for _, o := range res.Ops {
		if o.Series == "latency" {
			f.Ops = append(f.Ops, check.OpCount{Op: o.Op, Count: o.Count, Errors: o.Errors, P99: time.Duration(o.P99)})
		}
	}
	f.Server = serverMetrics(res.Metrics, 0, "")
	for i := range f.Nodes {
		f.Nodes[i].Server = serverMetrics(res.Metrics, i, f.Nodes[i].Name)
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
