package runner_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/boxbench/boxbench/agent"
	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/fake"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/agenttest"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// The runner's own logic on the fake platform (platform/fake): whole experiments without
// root, engines or databases, the fake database driven by the built-in generator. The tests do
// not run in parallel: each experiment starts with the host's wake-up probe
// (hostenv.MeasureWakeup), whose threads block in raw system calls, and a stop of the world
// for another experiment's garbage collection then waits for them forever.

// fakeAgentEnv makes the test binary serve as the agent with the fake database's driver (a
// duet side's pinned client, started by the runner as a child process).
const fakeAgentEnv = "BOXBENCH_FAKE_AGENT"

func TestMain(m *testing.M) {
	agenttest.ServeIfChild()
	if os.Getenv(fakeAgentEnv) == "1" {
		if err := agent.Serve(context.Background(), os.Stdin, os.Stdout, fakeSet.Workload, slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveFakeAgent serves the agent's protocol in this process with the fake set's workloads (the fake
// platform's client sites: fake.Options.Agent).
func serveFakeAgent(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	return agent.Serve(ctx, stdin, stdout, fakeSet.Workload, slog.New(slog.DiscardHandler))
}

// fakeSet is this build's databases and the fake one, added as one row.
var fakeSet = builtin.With(builtin.Database{DBMS: fake.DBMS{}, Driver: func(builtin.DriverOptions) ycsb.Opener { return fake.Open }})

// fakeSpec is an experiment on the fake platform: the test's name, the matrix's other axes, and
// the test's own keys.
const fakeSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: runner-fake-%s
dbms: fake
` + fakeWorkload + `
telemetry: {interval: 100ms}
matrix:
  platform: [fake]
  storage: [memory]
  network: [host]
%squietStart: {timeout: 0s}
%s`

// fakeWorkload is fakeSpec's workload and data set.
const fakeWorkload = `workload: {type: ycsb, mix: a, threads: 2, duration: 600ms, warmup: 100ms, interval: 100ms}
dataset: {records: 200, fieldCount: 2, fieldLength: 20}`

// fakeEnv is one experiment on a fake platform.
type fakeEnv struct {
	t    *testing.T
	p    *fake.Platform
	text string
	work string
	out  string
	cfg  runner.Config
}

// newFake parses the spec (fakeSpec with axes and extra) against a fake platform of options o.
func newFake(t *testing.T, axes, extra string, o fake.Options) *fakeEnv {
	t.Helper()
	return newFakeOf(t, fakeSet, "", axes, extra, o)
}

// newFakeOf is newFake with the rows of set, and workload (when not "") instead of fakeSpec's
// workload and data set lines.
func newFakeOf(t *testing.T, set builtin.Set, workload, axes, extra string, o fake.Options) *fakeEnv {
	t.Helper()
	p := fake.New(o)
	ps := map[string]platform.Platform{fake.Name: p}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(t.Name()))
	text := fmt.Sprintf(fakeSpec, name[:min(len(name), 45)], axes, extra)
	if workload != "" {
		text = strings.Replace(text, fakeWorkload, workload, 1)
	}
	e, err := spec.Parse([]byte(text), "fake.yaml", set.Vocabulary(ps))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeEnv{t: t, p: p, text: text, work: workRoot(t), out: t.TempDir()}
	f.cfg = runner.Config{Spec: e, SpecText: []byte(text), OutDir: f.out, WorkRoot: f.work, Platforms: ps,
		Workloads: set.Workload, Neighbours: set.Neighbour, DBMS: set.DBMS, Check: set.Checker(ps, false),
		Log: slog.New(slog.DiscardHandler)}
	return f
}

// workRoot is a work root of the test's own that the runner accepts as any user (a temporary
// directory, not group-writable).
func workRoot(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// run runs (or, resume set, resumes) the experiment; afterwards no box may be left, and the
// work root holds nothing of the experiment but its lock and the seeds.
func (f *fakeEnv) run(ctx context.Context, resume bool) (runner.Summary, error) {
	f.t.Helper()
	cfg := f.cfg
	cfg.Resume = resume
	// Every run's boxes are gone when it ends (the experiment's own cleanup at its end would
	// hide a run that left one).
	cfg.Progress = &phaseHook{at: func(run plan.Run, phase string) {
		if f.cfg.Progress != nil {
			f.cfg.Progress.Phase(run, phase)
		}
	}, end: func(run plan.Run) {
		if n := f.p.Live(); n != 0 {
			f.t.Errorf("%d fake boxes left after run %s", n, run.ID())
		}
	}}
	sum, err := runner.Run(ctx, cfg)
	if n := f.p.Live(); n != 0 {
		f.t.Errorf("%d fake boxes left after the run", n)
	}
	if sum.ExperimentID != "" {
		if _, serr := os.Stat(filepath.Join(f.work, sum.ExperimentID)); !os.IsNotExist(serr) {
			f.t.Errorf("the experiment's work directory is left: %v", serr)
		}
	}
	return sum, err
}

// rows are the stored runs.
func (f *fakeEnv) rows() []results.RunRow { return storedRuns(f.t, f.out) }

// A whole experiment through the runner on the fake platform: every run ok with operations
// measured by the built-in generator, the data set loaded once through the platform and
// restored into every box, the box's telemetry (the fake's own account) stored, every box
// torn down.
func TestFakeExperiment(t *testing.T) {
	f := newFake(t, "", "repetitions: 2\n", fake.Options{Warnings: []platform.Warning{{Code: "fake_doubt", Message: "a doubt"}}})
	sum, err := f.run(context.Background(), false)
	if err != nil || sum.OK != 2 || sum.Failed != 0 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	for _, r := range f.rows() {
		if r.Throughput == nil || *r.Throughput <= 0 || len(r.Ops) == 0 || r.Ops[0].Count == 0 {
			t.Errorf("run %s: nothing measured: %+v", r.ID, r.Ops)
		}
		if !strings.HasPrefix(r.Facts["restore"], "seed fake-") || !strings.HasSuffix(r.Facts["restore"], ": 200 rows") ||
			r.Facts["seed_loaded_on"] != fake.Name {
			t.Errorf("run %s: restore %q, seed loaded on %q", r.ID, r.Facts["restore"], r.Facts["seed_loaded_on"])
		}
		if r.Emulated || !hasWarning(r, "fake_doubt") {
			t.Errorf("run %s: emulated %v, warnings %+v", r.ID, r.Emulated, r.Warnings)
		}
		if !strings.Contains(r.Facts["telemetry_missing"], "a fake box is no group") {
			t.Errorf("run %s: telemetry_missing %q", r.ID, r.Facts["telemetry_missing"])
		}
	}
	if n := countSeries(t, f.out, "db", "cpu_usage_seconds_per_second"); n == 0 {
		t.Error("no telemetry of the box stored")
	}
}

func hasWarning(r results.RunRow, code string) bool {
	for _, w := range r.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}

// countSeries counts the stored points of source's metric over every run.
func countSeries(t *testing.T, out, source, metric string) int {
	t.Helper()
	st := openStore(t, out)
	n := 0
	for _, r := range storedRuns(t, out) {
		pts, err := st.Series(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			if p.Source == source && p.Metric == metric {
				n++
			}
		}
	}
	return n
}

// phaseHook calls at when a run enters a phase and end (if set) when it ends (runner.Progress).
type phaseHook struct {
	mu  sync.Mutex
	at  func(run plan.Run, phase string)
	end func(run plan.Run)
}

func (*phaseHook) Begin(int, int) {}
func (*phaseHook) Add(int)        {}
func (h *phaseHook) Phase(run plan.Run, phase string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.at(run, phase)
}
func (h *phaseHook) End(run plan.Run, _, _ string) {
	if h.end != nil {
		h.end(run)
	}
}
func (*phaseHook) Finish() {}

// storedRuns reads the runs stored in the results directory out.
func storedRuns(t *testing.T, out string) []results.RunRow {
	t.Helper()
	rows, err := openStore(t, out).Runs()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// openStore opens the results in out until the test ends.
func openStore(t *testing.T, out string) *results.Store {
	t.Helper()
	st, err := results.OpenExisting(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
