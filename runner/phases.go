package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/boxbench/boxbench/agent"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
)

// The phases of a run (Runner.phases), each over the run's state.

// resolve finds the cell's database, with a password of its own, and its platform.
func (r *Runner) resolve(_ context.Context, s *runState) error {
	d, err := r.cfg.DBMS(s.cell.DBMS)
	if err != nil {
		return err
	}
	// Every run's server requires a password of its own (it may listen on a bridge address
	// other local users reach); it lives only in this process and the box's 0600 files.
	s.d = dbms.WithPassword(d, dbms.NewPassword())
	s.p = r.cfg.Platforms[s.cell.Platform]
	if s.p == nil {
		return &stageError{"platform", fmt.Errorf("platform %q is not available in this build", s.cell.Platform)}
	}
	return nil
}

// loadSeed gets the cell's data set as a seed (loading it the first time); a cluster is
// loaded in place once it runs (a seed holds one member's identity).
func (r *Runner) loadSeed(ctx context.Context, s *runState) error {
	c := s.cell
	r.cfg.Progress.Phase(s.run, "load")
	if c.Topology == nil {
		lctx, cancel := context.WithTimeout(ctx, r.cfg.Spec.Timeouts.Load.D())
		seed, err := r.seeds.Get(lctx, s.d, s.wl, c.Platform)
		cancel()
		if err != nil {
			return err
		}
		s.seed = seed
	}
	if s.seed.Loaded {
		_ = r.store.Event("load", fmt.Sprintf("seed %s for %s loaded on %s in %s", s.seed.Key, c.ID, s.seed.Platform, s.seed.Took.Round(time.Millisecond)))
	}
	for k, v := range envOfDBMS(ctx, s.d) {
		s.rec.Env[k] = v
	}
	return nil
}

// provisionBox makes the cell's box (a duet side's on the side's cpus) and records what it
// says of itself; a cluster gets its data set now.
func (r *Runner) provisionBox(ctx context.Context, s *runState) error {
	c, rec := s.cell, s.rec
	r.cfg.Progress.Phase(s.run, "provision")
	s.lim = c.Resources
	if s.slot.duet != nil {
		s.lim.Cpuset = placement.FormatList(s.slot.duet.side.Server)
	}
	rec.LimitsRequested = s.lim
	pctx, cancel := context.WithTimeout(ctx, r.cfg.Spec.Timeouts.Provision.D())
	box, err := r.provision(pctx, s.p, c, platform.Request{Experiment: r.id, Run: runDirName(s.slot.seq),
		WorkDir: fmt.Sprintf("%s/%s/%s", r.cfg.WorkRoot, r.id, runDirName(s.slot.seq)), DBMS: s.d,
		Choice:    platform.Choice{Storage: c.Storage, Network: c.Network, Runtime: c.Runtime, Cluster: c.Cluster},
		Resources: s.lim, StorageOpts: r.storageOpts(), Seed: s.seed.Snapshot(), Log: r.cfg.Log})
	cancel()
	if err != nil {
		return err
	}
	s.box = box
	rec.Facts = box.Facts()
	rec.Emulated = box.Traits().Emulated
	rec.Orchestrator = orchestratorOf(box.Traits().Orchestrator)
	if c.Topology != nil {
		if err := r.loadInPlace(ctx, box, s.d, s.wl, rec); err != nil {
			rec.LogTail = box.LogTail(4096)
			return &stageError{"load data", err}
		}
	}
	if s.slot.duet != nil {
		s.slot.duet.facts(rec)
	}
	if s.seed.Key != "" {
		rec.Facts["seed"] = s.seed.Key
	}
	if s.seed.Platform != "" {
		rec.Facts["seed_loaded_on"] = s.seed.Platform
	}
	rec.LimitsApplied = box.Applied()
	rec.Warnings = append(rec.Warnings, boxWarnings(box, "")...)
	return nil
}

// startNeighbours provisions the cell's neighbour boxes and records what they say.
func (r *Runner) startNeighbours(ctx context.Context, s *runState) error {
	ws := r.cfg.Spec.WorkloadOf(s.cell.Workload)
	window := r.cfg.Spec.Telemetry.Interval.D() + ws.Warmup.D() + ws.Duration.D()
	nbs, err := r.provisionNeighbours(ctx, s.cell, s.d, s.box, fmt.Sprintf("%s/%s", r.cfg.WorkRoot, r.id), s.slot.seq, window)
	s.nbs = nbs // torn down by teardown even when one failed
	if err != nil {
		return err
	}
	for _, n := range nbs {
		prefix := results.NeighbourPrefix + n.name + "_"
		s.rec.Warnings = append(s.rec.Warnings, boxWarnings(n.box, prefix)...)
		for k, v := range n.box.Facts() {
			s.rec.Facts[prefix+k] = v
		}
		for k, v := range n.box.Applied().How {
			s.rec.Facts[prefix+"applied_"+k] = v
		}
	}
	return nil
}

// placeClient decides where the client runs: in this process, at the box's client site, or
// (a duet side) as an agent pinned to the side's client cpus.
func (r *Runner) placeClient(_ context.Context, s *runState) error {
	site := s.box.Traits().Site
	if site != nil && s.slot.duet != nil {
		// Its client would run at the box's own site, not on this side's cpus: the two sides'
		// clients could meet on one cpu, and the pair's ratio would not be a duet's.
		where, _ := site.ClientPlace()
		return &stageError{"duet", fmt.Errorf("order: duet pins each side's client to the side's cpus on this host (side %s: %s), but this box's client runs at %s, which cannot be pinned there: run this platform with order: randomized",
			s.slot.duet.name, s.slot.duet.side, where)}
	}
	if site == nil && s.slot.duet != nil {
		site = s.slot.duet.site(r.cfg.Agent, s.box.Endpoint())
	}
	if site != nil {
		rwl, err := r.remoteClient(site, s.wl, s.cell, s.rec)
		if err != nil {
			return err
		}
		s.wl, s.remote = rwl, rwl
	}
	return nil
}

// quietStart drops the page cache when asked and waits for a quiet host. A duet's sides wait
// for each other twice: both boxes up before either checks that the host is quiet, both
// checked before either starts its workload.
func (r *Runner) quietStart(ctx context.Context, s *runState) error {
	if err := s.slot.duet.wait(ctx, "provisioned"); err != nil {
		return &stageError{"duet", err}
	}
	r.cfg.Progress.Phase(s.run, "quiet start")
	s.hostMetrics = map[string]float64{}
	r.prepareHost(ctx, s.rec, s.hostMetrics)
	if ctx.Err() != nil {
		return errInterruptedRun
	}
	if err := s.slot.duet.wait(ctx, "quiet"); err != nil {
		return &stageError{"duet", err}
	}
	return nil
}

// measureWindow runs the workload with telemetry on one clock, then checks that the database
// still answers.
func (r *Runner) measureWindow(ctx context.Context, s *runState) error {
	rec := s.rec
	r.cfg.Progress.Phase(s.run, "warmup+measure")
	m, err := r.measure(ctx, s.box, s.d, s.wl, s.remote, r.cfg.Spec.WorkloadOf(s.cell.Workload), s.nbs, s.cell.ClientPolicy, rec.Env, &s.srv)
	if m == nil {
		m = &measured{}
	}
	res, samples := m.res, m.samples
	s.res, s.samples, s.missing, s.inGroup, s.partsMissing = res, samples, m.missing, m.inGroup, m.partsMissing
	rec.Result = res
	for _, p := range samples {
		rec.Series = append(rec.Series, results.Point{T: p.T, Source: p.Source, Metric: p.Metric, Label: p.Label, Value: p.Value})
	}
	if remote := s.remote; remote != nil && res != nil {
		// How long after the host asked the agent started measuring (the site's start-up time
		// plus the clocks' disagreement): the intervals are placed on the run's clock by it.
		rec.Facts["client_start_delay"] = remote.Skew.String()
		rec.Facts["client_build"] = remote.Build
		if remote.Build != agent.Build() {
			rec.Warnings = append(rec.Warnings, results.Warning{Code: "client_build_differs", Severity: "warning",
				Message: fmt.Sprintf("the client at the site is boxbench %q, this is %q: the load generator may differ from a local client's (rebuild the agent image: boxbench images agent)", remote.Build, agent.Build())})
		}
	}
	if err == nil && ctx.Err() == nil {
		err = alive(ctx, s.d, s.box)
	}
	if err != nil {
		rec.LogTail = s.box.LogTail(4096)
		return err
	}
	return nil
}

// boxWarnings are a box's own doubts as run warnings, their codes under prefix.
func boxWarnings(b platform.Box, prefix string) []results.Warning {
	var out []results.Warning
	for _, w := range b.Warnings() {
		out = append(out, results.Warning{Code: prefix + w.Code, Severity: "warning", Message: w.Message})
	}
	return out
}

// orchestratorOf is what a box recorded of its orchestrator as the run stores it (zero: none).
func orchestratorOf(o *platform.Orchestrator) results.Orchestrator {
	if o == nil {
		return results.Orchestrator{}
	}
	out := results.Orchestrator{Name: o.Name}
	for _, f := range o.Facts {
		out.Facts = append(out.Facts, results.OrchestratorFact{Key: f.Key, Label: f.Label, Value: f.Value})
	}
	return out
}
