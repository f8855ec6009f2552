package runner_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/fake"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/workload"
)

// fakeAgent starts the test binary as a duet side's agent with the fake database's driver.
func fakeAgent() runner.AgentCommand {
	return runner.AgentCommand{Argv: []string{os.Args[0]}, Env: []string{fakeAgentEnv + "=1"}}
}

const duetAxes = "  replica: [a, b]\n"
const duetExtra = "baseline: {replica: a}\norder: duet\n"

// order: duet on the fake platform: each pair's two runs overlap, on the two sides' cpus, each
// with its client an agent pinned to its side, partners of each other under one token; when
// one side fails, its partner fails at the gate it waited at, naming why.
func TestFakeDuet(t *testing.T) {
	if len(placement.HostCPUs()) < placement.MinDuetCPUs {
		testenv.Skip(t, "a duet needs 2 cpus")
	}
	testenv.NeedCommands(t, "taskset")
	t.Run("pairs", func(t *testing.T) {
		f := newFake(t, duetAxes, duetExtra+"repetitions: 2\n", fake.Options{})
		f.cfg.Agent = fakeAgent()
		sum, err := f.run(context.Background(), false)
		if err != nil || sum.OK != 4 {
			t.Fatalf("%+v, %v", sum, err)
		}
		byPair := map[string][]results.RunRow{}
		for _, r := range f.rows() {
			byPair[r.Duet.Pair] = append(byPair[r.Duet.Pair], r)
			if !strings.HasPrefix(r.Env["client_site"], "boxbench agent on this host, cpus ") || r.Env["client_policy"] != "remote" {
				t.Errorf("%s: client site %q, policy %q", r.ID, r.Env["client_site"], r.Env["client_policy"])
			}
		}
		if len(byPair) != 2 {
			t.Fatalf("%d pairs, want 2", len(byPair))
		}
		for tok, rs := range byPair {
			if len(rs) != 2 || rs[0].CellID == rs[1].CellID {
				t.Fatalf("pair %s: %d runs", tok, len(rs))
			}
			a, b := rs[0], rs[1]
			if a.Facts[plan.FactDuetPartner] != b.ID || b.Facts[plan.FactDuetPartner] != a.ID ||
				a.Facts[plan.FactDuetSide][:1] == b.Facts[plan.FactDuetSide][:1] {
				t.Errorf("pair %s: partners %q %q, sides %q %q", tok, a.Facts[plan.FactDuetPartner], b.Facts[plan.FactDuetPartner],
					a.Facts[plan.FactDuetSide], b.Facts[plan.FactDuetSide])
			}
			if a.Started.After(b.Ended) || b.Started.After(a.Ended) {
				t.Errorf("pair %s: runs did not overlap", tok)
			}
			if ca, cb := a.ClientCPUs, b.ClientCPUs; ca == "" || ca == cb {
				t.Errorf("pair %s: clients on cpus %q and %q", tok, ca, cb)
			}
		}
	})
	t.Run("partner fails", func(t *testing.T) {
		f := newFake(t, duetAxes, duetExtra+"repetitions: 1\n", fake.Options{Fault: func(p string, r platform.Request) error {
			if p == fake.FaultProvision && r.Run == "r0002" {
				return errInjected
			}
			return nil
		}})
		f.cfg.Agent = fakeAgent()
		if _, err := f.run(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		reasons := map[string]bool{}
		for _, r := range f.rows() {
			if r.Status != "failed" {
				t.Errorf("%s: %s, want failed", r.ID, r.Status)
			}
			reasons[strings.SplitN(r.Reason, ":", 2)[0]] = true
			if strings.HasPrefix(r.Reason, "duet:") && !strings.Contains(r.Reason, "the other run of the duet failed before provisioned") {
				t.Errorf("%s: %q", r.ID, r.Reason)
			}
		}
		if !reasons["provision"] || !reasons["duet"] {
			t.Errorf("reasons %v, want one provision and one duet", reasons)
		}
	})
	t.Run("box with a client site", func(t *testing.T) {
		f := newFake(t, duetAxes, duetExtra+"repetitions: 1\n", fake.Options{Agent: serveFakeAgent})
		f.cfg.Agent = fakeAgent()
		if _, err := f.run(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		for _, r := range f.rows() {
			if r.Status != "failed" || !strings.HasPrefix(r.Reason, "duet: ") {
				t.Errorf("%s: %s %q, want a duet failure", r.ID, r.Status, r.Reason)
			}
		}
	})
}

// A box with a client site gets its workload run there (the agent's protocol, in this process
// on the fake platform): the runs are ok with operations measured, where the client ran is
// recorded, and the host's client telemetry is recorded as missing rather than showing
// boxbench's idle process.
func TestFakeRemoteClient(t *testing.T) {
	f := newFake(t, "", "repetitions: 2\n", fake.Options{Agent: serveFakeAgent})
	sum, err := f.run(context.Background(), false)
	if err != nil || sum.OK != 2 {
		t.Fatalf("%+v, %v", sum, err)
	}
	for _, r := range f.rows() {
		where := "the fake platform's client site (an agent in this process)"
		if r.Env["client_site"] != where || r.Env["client_policy"] != "remote" {
			t.Errorf("run %s: client site %q policy %q", r.ID, r.Env["client_site"], r.Env["client_policy"])
		}
		if !strings.Contains(r.Facts["telemetry_missing"], "client: it ran at "+where) || r.Facts["client_start_delay"] == "" {
			t.Errorf("run %s: facts %v", r.ID, r.Facts)
		}
		if len(r.Ops) == 0 || r.Ops[0].Count == 0 {
			t.Errorf("run %s: no operations: %+v", r.ID, r.Ops)
		}
	}
}

// A topology on the fake platform: the cluster of three boxes is loaded in place, every node
// is observed, and each node's resource use is a metric of the run.
func TestFakeTopology(t *testing.T) {
	f := newFake(t, "", "topology: {nodes: 3}\nrepetitions: 1\n", fake.Options{Cluster: true})
	sum, err := f.run(context.Background(), false)
	if err != nil || sum.OK != 1 {
		t.Fatalf("%+v, %v", sum, err)
	}
	r := f.rows()[0]
	if r.Facts["topology_nodes"] != "3" || !strings.HasPrefix(r.Facts["restore"], "loaded in place") {
		t.Errorf("facts %v", r.Facts)
	}
	m := metricsOf(t, r)
	for _, n := range []string{"n1", "n2", "n3"} {
		if !has(m, results.NodeMetric(n, "cpu_cores")) {
			t.Errorf("no cpu metric of node %s: %v", n, m)
		}
	}
	if m[results.NodeMetric("n1", "cpu_cores")] <= 0 {
		t.Errorf("node n1, which the client uses, did no work: %v", m)
	}
}

// A box that says its CPU is emulated makes an emulated run (a typed column, not a fact).
func TestFakeEmulated(t *testing.T) {
	f := newFake(t, "", "repetitions: 1\n", fake.Options{Emulated: true})
	if sum, err := f.run(context.Background(), false); err != nil || sum.OK != 1 {
		t.Fatalf("%+v, %v", sum, err)
	}
	if r := f.rows()[0]; !r.Emulated {
		t.Errorf("run %s not emulated", r.ID)
	}
}

// What a box records of its orchestrator is stored with the run as it said it (a typed part of
// the record, in order with its labels), its facts among the run's facts; a cluster's run
// stores its first node's.
func TestFakeOrchestrator(t *testing.T) {
	o := &platform.Orchestrator{Name: "Orch", Facts: []platform.OrchestratorFact{
		{Key: "orch_cluster", Label: "cluster", Value: "east"}, {Key: "orch_version", Label: "version", Value: "7"},
		{Key: "orch_nodes", Label: "nodes"}}}
	want := results.Orchestrator{Name: "Orch", Facts: []results.OrchestratorFact{
		{Key: "orch_cluster", Label: "cluster", Value: "east"}, {Key: "orch_version", Label: "version", Value: "7"},
		{Key: "orch_nodes", Label: "nodes"}}}
	for _, extra := range []string{"", "topology: {nodes: 3}\n"} {
		f := newFake(t, "", extra+"repetitions: 1\n", fake.Options{Orchestrator: o, Cluster: extra != ""})
		if sum, err := f.run(context.Background(), false); err != nil || sum.OK != 1 {
			t.Fatalf("%q: %+v, %v", extra, sum, err)
		}
		r := f.rows()[0]
		if !reflect.DeepEqual(r.Orchestrator, want) {
			t.Errorf("%q: run %s: orchestrator %+v, want %+v", extra, r.ID, r.Orchestrator, want)
		}
		if r.Facts["orch_version"] != "7" {
			t.Errorf("%q: run %s: facts %v lack the orchestrator's", extra, r.ID, r.Facts)
		}
	}
	f := newFake(t, "", "repetitions: 1\n", fake.Options{})
	if sum, err := f.run(context.Background(), false); err != nil || sum.OK != 1 {
		t.Fatalf("%+v, %v", sum, err)
	}
	if r := f.rows()[0]; r.Orchestrator.Name != "" || r.Orchestrator.Facts != nil {
		t.Errorf("run %s on no orchestrator: %+v", r.ID, r.Orchestrator)
	}
}

// panicky wraps a workload; its first Run (run 2's) panics (a bug in the client's goroutine).
type panicky struct {
	workload.Workload
	calls *atomic.Int64
}

func (p panicky) Run(ctx context.Context, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	if p.calls.Add(1) == 1 { // run 1 never reaches the workload
		panic("workload bug")
	}
	return p.Workload.Run(ctx, t, clk)
}

// A panic in the runner's goroutine (run 1, when it enters its measured phase) and in the
// workload (run 2) each end their run as failed with the panic and its stack in the reason;
// the box is torn down; run 3 is ok.
func TestPanicsFailTheRun(t *testing.T) {
	f := newFake(t, "", "repetitions: 3\norder: sequential\n", fake.Options{})
	var calls atomic.Int64
	f.cfg.Workloads = func(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
		w, err := fakeSet.Workload(e, c)
		return panicky{w, &calls}, err
	}
	var fired atomic.Bool
	f.cfg.Progress = &phaseHook{at: func(_ plan.Run, phase string) {
		if phase == "warmup+measure" && fired.CompareAndSwap(false, true) {
			panic("progress bug")
		}
	}}
	sum, err := f.run(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK != 1 || sum.Failed != 2 {
		t.Errorf("want 1 ok and 2 failed runs, got %+v", sum)
	}
	want := []struct{ status, reason string }{{"failed", "progress bug"}, {"failed", "workload bug"}, {"ok", ""}}
	for i, row := range f.rows() {
		if i >= len(want) {
			break
		}
		if row.Status != want[i].status || !strings.Contains(row.Reason, want[i].reason) ||
			(want[i].reason != "" && !strings.Contains(row.Reason, "goroutine")) {
			t.Errorf("run %d: status %s, reason %q; want %s with %q and a stack", i+1, row.Status, row.Reason, want[i].status, want[i].reason)
		}
	}
}

// hung wraps a workload; its first Run ignores cancellation until the test ends.
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
// workload's timeout plus the abandon grace); the box is torn down and the next run is ok.
func TestHungWorkloadFailsTheRun(t *testing.T) {
	defer runner.SetGraces(time.Second, time.Second)()
	f := newFake(t, "", "repetitions: 2\norder: sequential\n", fake.Options{})
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int64
	f.cfg.Workloads = func(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
		w, err := fakeSet.Workload(e, c)
		return hung{w, &calls, release}, err
	}
	sum, err := f.run(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	rows := f.rows()
	if len(rows) != 2 || rows[0].Status != "failed" || !strings.Contains(rows[0].Reason, "did not stop") || rows[1].Status != "ok" {
		for _, r := range rows {
			t.Logf("%s %s %q", r.ID, r.Status, r.Reason)
		}
		t.Fatalf("want the hung run failed and the next ok: %+v", sum)
	}
}
