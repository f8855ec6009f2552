package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/boxbench/boxbench/agent"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/internal/recovery"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

// measure samples telemetry for one interval before the workload starts (the pre-run host
// state) and through the whole workload, on one clock. The workload runs under the client
// policy given; env["client_policy"] records the policy the kernel reports for the client then.
func (r *Runner) measure(ctx context.Context, box platform.Box, d dbms.DBMS, wl workload.Workload, remote *agent.Remote, ws *spec.Workload,
	nbs []*neighbour, policy string, env map[string]string, srv *serverOutcome) (*measured, error) {
	e := r.cfg.Spec
	clk := workload.Clock{Start: time.Now()}
	m := &measured{}
	targets, closeDB, err := m.targetsOf(ctx, "db", box.Observe())
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	defer closeDB()
	// A box of several (a cluster): "db" is its first node; every other node is a source of
	// its own (db-n2, …), observed its own platform's way (platform.Traits.Nodes).
	for i, n := range platform.NodesOf(box) {
		if i == 0 {
			continue
		}
		ts, closeN, err := m.targetsOf(ctx, results.NodeSource(i, n.Name), n.Box.Observe())
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		defer closeN()
		targets = append(targets, ts...)
	}
	if remote == nil {
		targets = append(targets, telemetry.Target{Source: "client", PID: os.Getpid()})
	}
	targets = append(targets, telemetry.Target{Source: "host", Host: true})
	for _, n := range nbs {
		ts, closeN, err := (&measured{}).targetsOf(ctx, n.source(), n.box.Observe())
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		defer closeN()
		targets = append(targets, ts...)
	}
	sampler, err := telemetry.New(targets, e.Telemetry.Interval.D(), clk, r.cfg.Log)
	if err != nil {
		// Telemetry is not optional: a run without its resource story is not reported.
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	if err := sampler.Start(ctx); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
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
	if wl.Traits().NotifiesMeasuring && remote == nil {
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
	m.res, m.samples, m.missing = res, samples, append(missing, m.missing...)
	return m, werr
}

// measured is what the measured window gave: the workload's result, the samples, what
// telemetry could not see, and the components of the database's box parts that run inside
// its group (attribution.Sources.InGroup).
type measured struct {
	res     *workload.Result
	samples []telemetry.Sample
	missing []string
	inGroup []string
	// partsMissing says why a box's parts could not be named (attribution.Sources.NotMeasured).
	partsMissing []string
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
// Only a workload whose Traits say Remote can run there (the built-in generator): the tools'
// adapters need their binaries on the host or the box's executor.
func (r *Runner) remoteClient(site platform.ClientSite, wl workload.Workload, c *plan.Cell, rec *results.RunRecord) (*agent.Remote, error) {
	where, ep := site.ClientPlace()
	if !wl.Traits().Remote {
		w := r.cfg.Spec.WorkloadOf(c.Workload)
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
	// The site's pin, or none: boxbench's own pin is not this client's.
	rec.ClientCPUs = site.ClientCPUs()
	var lost []string
	if r.cfg.Spec.Placement.Client != "" && rec.ClientCPUs == "" {
		lost = append(lost, "placement.client")
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

// alive checks, after the workload, that the database still answers: a server killed or
// stopped during the run fails it even when the workload only counted errors.
func alive(ctx context.Context, d dbms.DBMS, box platform.Box) error {
	limit := aliveTimeout
	if box.Traits().Emulated {
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
func (m *measured) targetsOf(ctx context.Context, source string, o platform.Observation) ([]telemetry.Target, func(), error) {
	ts := []telemetry.Target{{Source: source, Cgroup: o.Cgroup, PID: o.PID, DataDir: o.DataDir, Missing: o.Missing}}
	if o.Parts != nil {
		// The box's machinery (where the time goes): a box whose parts cannot be found still
		// runs, with the gap recorded.
		parts, err := o.Parts(ctx)
		if err != nil {
			m.missing = append(m.missing, source+": box parts: "+err.Error())
			m.partsMissing = append(m.partsMissing, "box "+source+": "+err.Error())
		}
		for _, p := range parts {
			ts[0].Parts = append(ts[0].Parts, telemetry.Part{Component: p.Component, PID: p.PID, Threads: p.Threads})
			if p.InGroup && !slices.Contains(m.inGroup, p.Component) {
				m.inGroup = append(m.inGroup, p.Component)
			}
		}
	}
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
