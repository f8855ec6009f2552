package runner

import (
	"context"
	"errors"
	"fmt"
	"github.com/boxbench/boxbench/agent"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/boxbench/boxbench/check"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/recovery"
	"github.com/boxbench/boxbench/placement"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/resource"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
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
// aliveTimeoutEmulated for a box whose CPU is emulated (fact emulated=true), where a
// connection with SCRAM authentication alone takes seconds.
const (
	aliveTimeout         = 5 * time.Second
	aliveTimeoutEmulated = 60 * time.Second
)

// execute performs one run and returns its record. It never returns without tearing the box
// down. When ctx is cancelled the record is incomplete and the caller discards it. A panic in
// the run (after the box's deferred teardowns ran) is a failed run whose reason holds the
// panic and its stack; the experiment goes on with the next run.
func (r *Runner) execute(ctx context.Context, run plan.Run, wl workload.Workload, slot slot) *results.RunRecord {
	rec := &results.RunRecord{ID: run.ID(), CellID: run.Cell.ID, Rep: run.Rep, Started: time.Now(),
		Env: map[string]string{}, Facts: map[string]string{}}
	for k, v := range r.env {
		rec.Env[k] = v
	}
	err := recovery.Call("run "+rec.ID, func() error { r.perform(ctx, run, wl, slot, rec); return nil })
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

// perform is execute's body: it fills rec in.
func (r *Runner) perform(ctx context.Context, run plan.Run, wl workload.Workload, slot slot, rec *results.RunRecord) {
	c := run.Cell
	e := r.cfg.Spec
	fail := func(stage string, err error) {
		rec.Status, rec.Reason = "failed", stage+": "+err.Error()
		if full := diskFull(err, r.cfg.WorkRoot); full != "" {
			rec.Reason = stage + ": " + full + ": " + err.Error()
		}
		r.cfg.Log.Warn("run failed", "run", rec.ID, "stage", stage, "err", err)
	}
	d, err := r.cfg.DBMS(c.DBMS)
	if err != nil {
		fail("dbms", err)
		return
	}
	// Every run's server requires a password of its own (it may listen on a bridge address
	// other local users reach); it lives only in this process and the box's 0600 files.
	d = dbms.WithPassword(d, dbms.NewPassword())
	p := r.cfg.Platforms[c.Platform]
	if p == nil {
		fail("platform", fmt.Errorf("platform %q is not available in this build", c.Platform))
		return
	}

	r.cfg.Progress.Phase(run, "load")
	var seed SeedInfo
	if c.Topology == nil {
		// A cluster is loaded in place once it runs (a seed holds one member's identity).
		lctx, cancel := context.WithTimeout(ctx, e.Timeouts.Load.D())
		seed, err = r.seeds.Get(lctx, d, wl, c.Platform)
		cancel()
		if err != nil {
			fail("load data", err)
			return
		}
	}
	if seed.Loaded {
		_ = r.store.Event("load", fmt.Sprintf("seed %s for %s loaded on %s in %s", seed.Key, c.ID, seed.Platform, seed.Took.Round(time.Millisecond)))
	}
	for k, v := range envOfDBMS(ctx, d) {
		rec.Env[k] = v
	}

	r.cfg.Progress.Phase(run, "provision")
	lim := c.Resources
	if slot.duet != nil {
		lim.Cpuset = placement.FormatList(slot.duet.side.Server)
	}
	rec.LimitsRequested = lim
	pctx, cancel := context.WithTimeout(ctx, e.Timeouts.Provision.D())
	box, err := r.provision(pctx, p, c, platform.Request{Experiment: r.id, Run: runDirName(slot.seq),
		WorkDir: fmt.Sprintf("%s/%s/%s", r.cfg.WorkRoot, r.id, runDirName(slot.seq)), DBMS: d,
		Choice:    platform.Choice{Storage: c.Storage, Network: c.Network, Runtime: c.Runtime},
		Resources: lim, StorageOpts: r.storageOpts(), Seed: seed.Snapshot(), Log: r.cfg.Log})
	cancel()
	if err != nil {
		fail("provision", err)
		return
	}
	defer func() {
		r.cfg.Progress.Phase(run, "teardown")
		tctx, cancel := platform.TeardownContext(ctx)
		defer cancel()
		if err := box.Teardown(tctx); err != nil {
			rec.Warnings = append(rec.Warnings, results.Warning{Code: "teardown_failed", Severity: "error",
				Message: "tearing the box down failed; leftovers may remain (boxbench doctor --cleanup removes them): " + err.Error()})
		}
	}()
	rec.Facts = box.Facts()
	rec.Emulated = emulated(box)
	if c.Topology != nil {
		if err := r.loadInPlace(ctx, box, d, wl, rec); err != nil {
			rec.LogTail = box.LogTail(4096)
			fail("load data", err)
			return
		}
	}
	if slot.duet != nil {
		slot.duet.facts(rec)
	}
	if seed.Key != "" {
		rec.Facts["seed"] = seed.Key
	}
	if seed.Platform != "" {
		rec.Facts["seed_loaded_on"] = seed.Platform
	}
	rec.LimitsApplied = box.Applied()
	rec.Warnings = append(rec.Warnings, boxWarnings(box, "")...)
	ws := e.WorkloadOf(c.Workload)
	window := e.Telemetry.Interval.D() + ws.Warmup.D() + ws.Duration.D()
	nbs, err := r.provisionNeighbours(ctx, c, d, fmt.Sprintf("%s/%s", r.cfg.WorkRoot, r.id), slot.seq, window)
	defer func() {
		tctx, cancel := platform.TeardownContext(ctx)
		defer cancel()
		if err := teardownNeighbours(tctx, nbs); err != nil {
			rec.Warnings = append(rec.Warnings, results.Warning{Code: "teardown_failed", Severity: "error",
				Message: "tearing a neighbour down failed: " + err.Error()})
		}
	}()
	if err != nil {
		fail("neighbour", err)
		return
	}
	for _, n := range nbs {
		prefix := results.NeighbourPrefix + n.name + "_"
		rec.Warnings = append(rec.Warnings, boxWarnings(n.box, prefix)...)
		for k, v := range n.box.Facts() {
			rec.Facts[prefix+k] = v
		}
		for k, v := range n.box.Applied().How {
			rec.Facts[prefix+"applied_"+k] = v
		}
	}

	site := box.Traits().Site
	if site != nil && slot.duet != nil {
		// Its client would run at the box's own site, not on this side's cpus: the two sides'
		// clients could meet on one cpu, and the pair's ratio would not be a duet's.
		where, _ := site.ClientPlace()
		fail("duet", fmt.Errorf("order: duet pins each side's client to the side's cpus on this host (side %s: %s), but this box's client runs at %s, which cannot be pinned there: run this platform with order: randomized",
			slot.duet.name, slot.duet.side, where))
		return
	}
	if site == nil && slot.duet != nil {
		site = slot.duet.site(r.cfg.Agent, box.Endpoint())
	}
	if site != nil {
		rwl, err := r.remoteClient(site, wl, c, rec)
		if err != nil {
			fail("client", err)
			return
		}
		wl = rwl
	}

	// A duet's sides wait for each other twice: both boxes up before either checks that the
	// host is quiet, both checked before either starts its workload.
	if err := slot.duet.wait(ctx, "provisioned"); err != nil {
		fail("duet", err)
		return
	}
	r.cfg.Progress.Phase(run, "quiet start")
	hostMetrics := map[string]float64{}
	r.prepareHost(ctx, rec, hostMetrics)
	if ctx.Err() != nil {
		return // interrupted while waiting: the caller discards the record
	}
	if err := slot.duet.wait(ctx, "quiet"); err != nil {
		fail("duet", err)
		return
	}

	r.cfg.Progress.Phase(run, "warmup+measure")
	var srv serverOutcome
	res, samples, missing, err := r.measure(ctx, box, d, wl, ws, nbs, c.ClientPolicy, rec.Env, &srv)
	rec.Result = res
	for _, s := range samples {
		rec.Series = append(rec.Series, results.Point{T: s.T, Source: s.Source, Metric: s.Metric, Label: s.Label, Value: s.Value})
	}
	if remote, ok := wl.(*agent.Remote); ok && res != nil {
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
		err = alive(ctx, d, box)
	}
	if err != nil {
		rec.LogTail = box.LogTail(4096)
		fail("measure", err)
		return
	}
	if err := r.neighbourResults(res, samples, nbs, lim); err != nil {
		fail("neighbour", err)
		return
	}
	rec.Status = "ok"
	rec.Warnings = append(rec.Warnings, serverResult(srv, res, rec.Facts)...)
	rec.Warnings = append(rec.Warnings, r.validity(c, res, samples, box, lim, rec.Env)...)
	// After the checks, which read the whole window as the workload ran it.
	r.steadyState(res, rec)
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	for k, v := range hostMetrics {
		res.Metrics[k] = v
	}
	for k, v := range nodeMetrics(box, samples, r.cfg.Spec.Telemetry.Interval.D()+res.Warmup) {
		res.Metrics[k] = v
	}
	if v, ok := softirqPerOp(samples, r.cfg.Spec.Telemetry.Interval.D(), res); ok {
		res.Metrics[MetricSoftirqPerOp] = v
	}
	if len(missing) > 0 {
		rec.Facts["telemetry_missing"] = strings.Join(missing, "; ")
	}
}

// measure samples telemetry for one interval before the workload starts (the pre-run host
// state) and through the whole workload, on one clock. The workload runs under the client
// policy given; env["client_policy"] records the policy the kernel reports for the client then.
func (r *Runner) measure(ctx context.Context, box platform.Box, d dbms.DBMS, wl workload.Workload, ws *spec.Workload,
	nbs []*neighbour, policy string, env map[string]string, srv *serverOutcome) (*workload.Result, []telemetry.Sample, []string, error) {
	e := r.cfg.Spec
	clk := workload.Clock{Start: time.Now()}
	targets, closeDB, err := targetsOf("db", box.Observe())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("telemetry: %w", err)
	}
	defer closeDB()
	// A box of several (a cluster): "db" is its first node; every other node is a source of
	// its own (db-n2, …), observed its own platform's way (platform.Traits.Nodes).
	for i, n := range platform.NodesOf(box) {
		if i == 0 {
			continue
		}
		ts, closeN, err := targetsOf(results.NodeSource(i, n.Name), n.Box.Observe())
		if err != nil {
			return nil, nil, nil, fmt.Errorf("telemetry: %w", err)
		}
		defer closeN()
		targets = append(targets, ts...)
	}
	remote, _ := wl.(*agent.Remote)
	if remote == nil {
		targets = append(targets, telemetry.Target{Source: "client", PID: os.Getpid()})
	}
	targets = append(targets, telemetry.Target{Source: "host", Host: true})
	for _, n := range nbs {
		ts, closeN, err := targetsOf(n.source(), n.box.Observe())
		if err != nil {
			return nil, nil, nil, fmt.Errorf("telemetry: %w", err)
		}
		defer closeN()
		targets = append(targets, ts...)
	}
	sampler, err := telemetry.New(targets, e.Telemetry.Interval.D(), clk, r.cfg.Log)
	if err != nil {
		// Telemetry is not optional: a run without its resource story is not reported.
		return nil, nil, nil, fmt.Errorf("telemetry: %w", err)
	}
	if err := sampler.Start(ctx); err != nil {
		return nil, nil, nil, fmt.Errorf("telemetry: %w", err)
	}
	select {
	case <-time.After(e.Telemetry.Interval.D() + 50*time.Millisecond):
	case <-ctx.Done():
	}
	cred := d.Client()
	t := workload.Target{DBMS: d.Name(), Endpoint: box.Endpoint(), User: cred.User, Password: cred.Password, Database: cred.Database,
		Box: box, DataDir: box.DataDir(), Log: r.cfg.Log}
	wctx, cancel := context.WithTimeout(ctx, ws.Warmup.D()+ws.Duration.D()+measureGrace)
	// Neighbours start with the measured workload (after the pre-run interval, so that it
	// still shows the quiet host) and run to the end of the measured window.
	for _, n := range nbs {
		n.start(wctx, clk, r.cfg.Log)
	}
	// The database's own counters over the measured window (dbms.Observer): read when the
	// warm-up ends and after the workload.
	var measuring chan struct{}
	if _, ok := wl.(workload.MeasureNotifier); ok && remote == nil {
		measuring = make(chan struct{})
		t.Measuring = sync.OnceFunc(func() { close(measuring) })
	}
	sw := watchServer(ctx, d, box, ws.Warmup.D(), measuring)
	// The client's scheduling policy covers the workload only: servers and neighbours started
	// before keep theirs, and the native platform resets it for whatever it starts meanwhile.
	var res *workload.Result
	var werr error
	if remote != nil {
		// The agent runs under whatever scheduling its site gives it.
		env["client_policy"] = "remote"
		res, werr = runBounded(wctx, wl, t, clk)
	} else {
		res, werr = r.runLocal(wctx, wl, t, clk, policy, env)
	}
	if sw != nil && werr == nil && res != nil && ctx.Err() == nil {
		srv.ran = true
		srv.nodes = sw.end(ctx)
	} else {
		sw.abort()
	}
	for _, n := range nbs {
		n.wait()
	}
	cancel()
	samples, serr := sampler.Stop()
	var panicked *recovery.Error
	if errors.As(serr, &panicked) && werr == nil {
		werr = fmt.Errorf("telemetry: %w", serr) // the sampler died: the resource story is lost
	} else if serr != nil {
		r.cfg.Log.Warn("telemetry incomplete", "err", serr)
	}
	if werr == nil && res == nil {
		werr = errors.New("workload returned no result")
	}
	missing := sampler.Missing()
	if remote != nil {
		where, _ := remote.Site.ClientPlace()
		missing = append(missing, "client: it ran at "+where+"; its CPU is the agent's own account (client_cpu), its scheduling is not sampled")
	}
	return res, samples, missing, werr
}

// runLocal runs the workload in this process under the client policy given; env["client_policy"]
// records the policy the kernel reports for the client then.
func (r *Runner) runLocal(ctx context.Context, wl workload.Workload, t workload.Target, clk workload.Clock,
	policy string, env map[string]string) (*workload.Result, error) {
	restore, err := placement.SetPolicy(policy)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := restore(); err != nil {
			r.cfg.Log.Warn("restoring the client's scheduling policy", "err", err)
		}
	}()
	if env["client_policy"], err = placement.Policy(0); err != nil {
		return nil, err
	}
	return runBounded(ctx, wl, t, clk)
}

// remoteClient wraps the cell's workload to run at the box's client site, and records where.
// Only the built-in generator can run there: the tools' adapters need their binaries on the
// host (sysbench) or the box's executor (fio).
func (r *Runner) remoteClient(site platform.ClientSite, wl workload.Workload, c *plan.Cell, rec *results.RunRecord) (*agent.Remote, error) {
	where, ep := site.ClientPlace()
	if w := r.cfg.Spec.WorkloadOf(c.Workload); w.Type != "ycsb" {
		return nil, fmt.Errorf("the client of this box runs at %s, where only the built-in YCSB generator can run (workload type %s)", where, w.Type)
	}
	rec.Env["client_site"] = where
	rec.Facts["client_endpoint"] = ep.String()
	if len(ep.Members) > 1 {
		ms := make([]string, len(ep.Members))
		for i, m := range ep.Members {
			ms[i] = m.String()
		}
		rec.Facts["client_endpoints"] = strings.Join(ms, " ") // every node of a cluster, from the site
	}
	cpus := site.ClientCPUs()
	pinned := cpus != ""
	if pinned {
		rec.Env["client_cpus"] = cpus
	}
	var lost []string
	if r.cfg.Spec.Placement.Client != "" && !pinned {
		lost = append(lost, "placement.client")
		delete(rec.Env, "client_cpus") // boxbench's own pin, not this client's
	}
	if c.ClientPolicy != "" && c.ClientPolicy != placement.PolicyNormal {
		lost = append(lost, "clientPolicy")
	}
	if len(lost) > 0 {
		rec.Warnings = append(rec.Warnings, results.Warning{Code: "client_placement_remote", Severity: "warning",
			Message: "the client ran at " + where + ": " + strings.Join(lost, " and ") + " apply to boxbench's own client only"})
	}
	return &agent.Remote{Inner: wl, Site: site, Experiment: r.cfg.Spec, Cell: c}, nil
}

// runBounded runs the workload and returns when it does, or abandonGrace after ctx ended if it
// does not (then with an error; the goroutine is left behind). Its panic is recovered here,
// not only in execute, so that the policy is restored, the neighbours waited for and the
// sampler stopped on this path too.
func runBounded(ctx context.Context, wl workload.Workload, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	type outcome struct {
		res *workload.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		o.err = recovery.Call("workload", func() (err error) {
			o.res, err = wl.Run(ctx, t, clk)
			return err
		})
		done <- o
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
	}
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(abandonGrace):
		return nil, fmt.Errorf("the load generator did not stop within %s after its deadline (%v); abandoned", abandonGrace, ctx.Err())
	}
}

// emulated says whether the box's CPU is emulated (a VM under QEMU's TCG): its runs are
// labelled so, and waits on it are longer. The one place the runner reads it from the box's
// facts, until a box states it as a typed trait.
func emulated(box platform.Box) bool { return box.Facts()[platform.FactEmulated] == "true" }

// alive checks, after the workload, that the database still answers: a server killed or
// stopped during the run fails it even when the workload only counted errors.
func alive(ctx context.Context, d dbms.DBMS, box platform.Box) error {
	limit := aliveTimeout
	if emulated(box) {
		limit = aliveTimeoutEmulated
	}
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := d.Ready(actx, box.Endpoint(), d.Client()); err != nil {
		// The server's last words say what stopped it, when anything did (a SIGTERM from a
		// restarting engine, an out-of-memory kill it noticed, a full disk).
		if tail := strings.TrimSpace(box.LogTail(1024)); tail != "" {
			return fmt.Errorf("the database stopped answering during the run: %w\nserver log (tail):\n%s", err, tail)
		}
		return fmt.Errorf("the database stopped answering during the run: %w", err)
	}
	return nil
}

// targetsOf is a box's telemetry: what the host sees or the box's orchestrator reports (source), and for a box with a guest view
// also the server's group inside it (source-guest) and the whole guest (source-guest-system).
// The returned function releases the guest view.
func targetsOf(source string, o platform.Observation) ([]telemetry.Target, func(), error) {
	ts := []telemetry.Target{{Source: source, Cgroup: o.Cgroup, PID: o.PID, DataDir: o.DataDir, Missing: o.Missing}}
	if o.Stats != nil {
		ts[0].Stats = &telemetry.Stats{Via: o.Stats.Via, Read: o.Stats.Read}
	}
	if o.Guest == nil {
		return ts, func() {}, nil
	}
	g, err := telemetry.NewGuest(o.Guest.Sample, o.Guest.Group)
	if err != nil {
		return nil, nil, err
	}
	ts = append(ts, telemetry.Target{Source: source + "-guest", Guest: g},
		telemetry.Target{Source: source + "-guest-system", GuestSystem: g})
	return ts, func() { _ = g.Close() }, nil
}

// boxWarnings are a box's own doubts as run warnings, their codes under prefix.
func boxWarnings(b platform.Box, prefix string) []results.Warning {
	var out []results.Warning
	for _, w := range b.Warnings() {
		out = append(out, results.Warning{Code: prefix + w.Code, Severity: "warning", Message: w.Message})
	}
	return out
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

// validity turns the run's facts into warnings. env is the run's environment: client_cpus
// there is where this run's client was pinned (boxbench's own pin, or its site's).
func (r *Runner) validity(c *plan.Cell, res *workload.Result, samples []telemetry.Sample, box platform.Box, lim resource.Limits,
	env map[string]string) []results.Warning {
	interval := r.cfg.Spec.Telemetry.Interval.D()
	// The client's own account of its cpus first: it read its affinity wherever it ran (a
	// container, a pod, a duet side's agent).
	cores := float64(runtime.NumCPU())
	if res.ClientCPUs > 0 {
		cores = float64(res.ClientCPUs)
	} else if pinned, err := placement.ParseList(env["client_cpus"]); err == nil && len(pinned) > 0 {
		cores = float64(len(pinned)) // "0-1" from a site, "0,1" from placement.Pin
	}
	f := check.Facts{Wall: res.Measured, ClientCPU: res.ClientCPU, ClientCPUWall: res.ClientCPUWall, ClientCores: cores,
		DBSource: "db", Dataset: c.Bound, WarmupEnd: interval + res.Warmup,
		Spec: lim}
	if d, err := r.cfg.DBMS(c.DBMS); err == nil {
		f.ScansPerKey = d.Traits().ScansPerKey
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
