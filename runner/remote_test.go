package runner_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/agent/agenttest"
	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/platformtest"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/spec"
)

// sited is the native platform whose boxes have a client site: a child process that is the agent.
type sited struct{ platform.Platform }

type sitedBox struct {
	platform.Box
	site *agenttest.Site
}

// Traits: the inner box's, with the child process as its client site.
func (b sitedBox) Traits() platform.Traits {
	t := b.Box.Traits()
	t.Site = b.site
	return t
}

func (p sited) Provision(ctx context.Context, r platform.Request) (platform.Box, error) {
	b, err := p.Platform.Provision(ctx, r)
	if err != nil {
		return nil, err
	}
	return sitedBox{b, agenttest.Self(b.Endpoint())}, nil
}

// A box with a client site gets its workload run there: the runs are ok with operations
// measured, where the client ran is recorded, and the host's client telemetry is recorded as
// missing rather than showing boxbench's idle process.
func TestRemoteClient(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server")
	work, out := testenv.WorkRoot(t), t.TempDir()
	log := slog.New(slog.DiscardHandler)
	ps := map[string]platform.Platform{"native": sited{builtin.Platforms(log)["native"]}}
	text := strings.Replace(runner.SmallSpec, "repetitions: 3", "repetitions: 2", 1)
	e, err := spec.Parse([]byte(text), "remote.yaml", builtin.Vocabulary(ps))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := runner.Run(context.Background(), runner.Config{Spec: e, SpecText: []byte(text), OutDir: out,
		WorkRoot: work, Platforms: ps, Workloads: builtin.Workload, Neighbours: builtin.Neighbour, DBMS: builtin.DBMS,
		Check: builtin.Checker(ps, false), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK != 2 {
		t.Fatalf("want 2 ok runs, got %+v", sum)
	}
	rows := storedRuns(t, out)
	for _, r := range rows {
		if r.Env["client_site"] != "a child process" || r.Env["client_policy"] != "remote" {
			t.Errorf("run %s: client site %q policy %q", r.ID, r.Env["client_site"], r.Env["client_policy"])
		}
		if !strings.Contains(r.Facts["telemetry_missing"], "client: it ran at a child process") || r.Facts["client_start_delay"] == "" {
			t.Errorf("run %s: facts %v", r.ID, r.Facts)
		}
		if len(r.Ops) == 0 || r.Ops[0].Count == 0 {
			t.Errorf("run %s: no operations: %+v", r.ID, r.Ops)
		}
	}
	if left := platformtest.HostLeftovers(work, sum.ExperimentID); len(left) > 0 {
		t.Errorf("leftovers: %v", left)
	}
}

// storedRuns reads the runs stored in the results directory out.
func storedRuns(t *testing.T, out string) []results.RunRow {
	t.Helper()
	st, err := results.OpenExisting(out)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
