// Package agent runs boxbench's own load generator somewhere other than boxbench's process — a
// container on a Swarm overlay network, a pod on a cluster node — and brings its measurements
// back as if it had run here.
//
// The host side (Remote) is a workload.Workload: its Run sends one Job to `boxbench agent` at a
// platform.ClientSite and decodes the Reply. The agent side (Serve) reads the Job on standard
// input, builds the very same workload from the experiment and the cell (the same binary, the
// same builder), runs it and writes the Reply on standard output. The password travels only on
// standard input, never in argv or the environment.
//
// Clocks: the agent's intervals are offsets from its own start; the Reply carries that start as
// wall-clock time, and Remote moves the intervals onto the run's clock by the difference of the
// two wall clocks (exact on one host; off by the clock skew between nodes otherwise, which is
// recorded).
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/version"
	"github.com/boxbench/boxbench/workload"
)

// Version is the wire format's version; the agent refuses a job of another version (a site
// running an older binary than the host's would otherwise measure something else).
const Version = 2

// Job is what the host sends.
type Job struct {
	Version    int              `json:"version"`
	Experiment *spec.Experiment `json:"experiment"`
	Cell       *plan.Cell       `json:"cell"`
	Target     Target           `json:"target"`
}

// Target is workload.Target without what cannot travel (the box's executor, the logger).
type Target struct {
	DBMS     string          `json:"dbms"`
	Endpoint driver.Endpoint `json:"endpoint"`
	User     string          `json:"user"`
	Password string          `json:"password"`
	Database string          `json:"database"`
}

// Reply is what the agent sends back: the result with everything workload.Result leaves out
// of its JSON (intervals, histograms), the agent's clock origin, and the workload's error.
type Reply struct {
	Version int              `json:"version"`
	Result  *workload.Result `json:"result,omitempty"`
	// Intervals and OpHists are Result.Intervals and each Result.Ops[i].Hist.
	Intervals []workload.Interval `json:"intervals,omitempty"`
	OpHists   [][]byte            `json:"op_hists,omitempty"`
	// Start is the agent's Clock.Start as wall-clock nanoseconds since the epoch.
	Start int64  `json:"start_unix_ns"`
	Error string `json:"error,omitempty"`
	// Build is the agent's boxbench build (Build()).
	Build string `json:"build"`
}

// Build is this binary's boxbench version and commit, as a run records them.
func Build() string { return version.Version() + " " + version.Commit() }

// Builder builds a cell's workload (builtin.Workload); passed in to keep this package free of
// the wiring.
type Builder func(e *spec.Experiment, c *plan.Cell) (workload.Workload, error)

// Serve is the agent: one job from in, one reply to out. A job it cannot read or build is an
// error (the agent exits non-zero with it on stderr); a workload that fails still replies, with
// its partial result and the error.
func Serve(ctx context.Context, in io.Reader, out io.Writer, build Builder, log *slog.Logger) error {
	var job Job
	dec := json.NewDecoder(io.LimitReader(in, 16<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&job); err != nil {
		return fmt.Errorf("agent: reading the job: %w", err)
	}
	if job.Version != Version {
		return fmt.Errorf("agent: job version %d, this binary speaks %d (the site runs another boxbench build)", job.Version, Version)
	}
	if job.Experiment == nil || job.Cell == nil {
		return errors.New("agent: the job has no experiment or no cell")
	}
	wl, err := build(job.Experiment, job.Cell)
	if err != nil {
		return fmt.Errorf("agent: building the workload: %w", err)
	}
	t := workload.Target{DBMS: job.Target.DBMS, Endpoint: job.Target.Endpoint, User: job.Target.User,
		Password: job.Target.Password, Database: job.Target.Database, Log: log}
	clk := workload.Clock{Start: time.Now()}
	res, werr := wl.Run(ctx, t, clk)
	rep := Reply{Version: Version, Result: res, Start: clk.Start.UnixNano(), Build: Build()}
	if werr != nil {
		rep.Error = werr.Error()
	}
	if res != nil {
		rep.Intervals = res.Intervals
		for _, o := range res.Ops {
			rep.OpHists = append(rep.OpHists, o.Hist)
		}
	}
	return json.NewEncoder(out).Encode(rep)
}

// Remote runs a workload at a client site. Contract: as workload.Workload; Load is not
// supported (seeds are loaded on the host, before any box exists), and Target.Box is not
// available at the site, so workloads that run inside the box (fio) cannot be remote.
type Remote struct {
	Inner      workload.Workload // the same workload, built here: its name and load key
	Site       platform.ClientSite
	Experiment *spec.Experiment
	Cell       *plan.Cell
	// Skew, set by Run, is the difference between the agent's reported start and the time the
	// host asked for it, a bound on the clocks' disagreement plus the site's start-up time.
	Skew time.Duration
	// Build, set by Run, is the agent's boxbench build as it said (Build()).
	Build string
}

// Traits: a remote workload is already at its site; its Run does not call Target.Measuring
// (the agent's window is placed on the run's clock after Run, by Skew).
func (r *Remote) Traits() workload.Traits { return workload.Traits{} }

func (r *Remote) Name() string    { return r.Inner.Name() }
func (r *Remote) LoadKey() string { return r.Inner.LoadKey() }

func (r *Remote) Load(context.Context, workload.Target) error {
	return errors.New("agent: a remote client does not load data sets (seeds are loaded on the host)")
}

// Run sends the job, waits for the reply and returns the result on the run's clock.
func (r *Remote) Run(ctx context.Context, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	_, ep := r.Site.ClientPlace()
	job := Job{Version: Version, Experiment: r.Experiment, Cell: r.Cell,
		Target: Target{DBMS: t.DBMS, Endpoint: ep, User: t.User, Password: t.Password, Database: t.Database}}
	in, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("agent: encoding the job: %w", err)
	}
	asked := time.Now()
	var out bytes.Buffer
	serr := r.Site.RunAgent(ctx, bytes.NewReader(in), &out)
	res, rerr := r.decode(out.Bytes(), clk, asked)
	switch {
	case serr != nil && res == nil:
		return nil, fmt.Errorf("agent: %w", serr)
	case serr != nil:
		return res, fmt.Errorf("agent: %w", serr)
	}
	return res, rerr
}

// decode turns the agent's reply into a result on the host's clock. The returned error is the
// workload's own (with the partial result) or a reply that cannot be read.
func (r *Remote) decode(out []byte, clk workload.Clock, asked time.Time) (*workload.Result, error) {
	var rep Reply
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("agent: reading its reply: %w (output starts %q)", err, out[:min(len(out), 200)])
	}
	if rep.Version != Version {
		return nil, fmt.Errorf("agent: reply version %d, expected %d", rep.Version, Version)
	}
	var werr error
	if rep.Error != "" {
		werr = errors.New(rep.Error)
	}
	res := rep.Result
	if res == nil {
		if werr == nil {
			werr = errors.New("agent: the reply has no result")
		}
		return nil, werr
	}
	if len(rep.OpHists) != 0 && len(rep.OpHists) != len(res.Ops) {
		return nil, fmt.Errorf("agent: reply has %d histograms for %d operations", len(rep.OpHists), len(res.Ops))
	}
	for i := range rep.OpHists {
		res.Ops[i].Hist = rep.OpHists[i]
	}
	r.Build = rep.Build
	start := time.Unix(0, rep.Start)
	shift := start.Sub(clk.Start.Round(0))
	r.Skew = start.Sub(asked.Round(0))
	res.Intervals = rep.Intervals
	for i := range res.Intervals {
		res.Intervals[i].Start += shift
		res.Intervals[i].End += shift
	}
	return res, werr
}
