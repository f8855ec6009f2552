package runner_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/testkit/platformtest"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/workload"
)

// order: duet runs each cell beside its baseline: both runs of a pair overlap in time, on the
// two sides' cpus, each with its client pinned there, and carry the same pair token. On a
// host of 2 or 3 cpus each side is one cpu holding its server and its client (the shared
// layout, recorded), natively and in Docker containers.
func TestDuet(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server", "taskset")
	if n := len(placement.HostCPUs()); n < placement.MinDuetCPUs {
		testenv.Skip(t, "a duet needs 2 cpus")
	}
	for _, name := range []string{"native", "docker"} {
		t.Run(name, func(t *testing.T) {
			if name == "docker" {
				testenv.NeedDocker(t)
			}
			duetAA(t, name)
		})
	}
}

func duetAA(t *testing.T, name string) {
	out := t.TempDir()
	// An A/A duet: two cells that differ only in their replica label, on one platform.
	text := aaSpec{name: "runner-duet-" + name, duration: "2s", warmup: "1s", reps: 2, order: "duet",
		matrix: []string{"platform: [" + name + "]", "storage: [bind]", "network: [host]"}}.String()
	cfg := realConfig(t, name, text, out)
	sides, err := runner.DuetSides(cfg.Spec)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := runner.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK != 4 {
		t.Fatalf("want 4 ok runs (2 duets), got %+v", sum)
	}
	rows := storedRuns(t, out)
	byPair := map[string][]results.RunRow{}
	for _, r := range rows {
		byPair[r.Facts[plan.FactDuetPair]] = append(byPair[r.Facts[plan.FactDuetPair]], r)
		if !strings.HasPrefix(r.Env["client_site"], "boxbench agent on this host, cpus ") {
			t.Errorf("%s: client site %q", r.ID, r.Env["client_site"])
		}
		if cpus := r.ClientCPUs; cpus == "" || !strings.HasSuffix(r.Env["client_site"], "cpus "+cpus) {
			t.Errorf("%s: client cpus %q, site %q", r.ID, cpus, r.Env["client_site"])
		}
		for _, w := range r.Warnings {
			if w.Code == "client_placement_remote" {
				t.Errorf("%s: %s (the duet's client is pinned)", r.ID, w.Message)
			}
		}
		if r.Facts[plan.FactDuetLayout] != sides[0].Layout {
			t.Errorf("%s: duet_layout %q, want %q", r.ID, r.Facts[plan.FactDuetLayout], sides[0].Layout)
		}
		if sides[0].Layout == placement.DuetShared && r.ClientCPUs != appliedCpuset(r) {
			t.Errorf("%s: shared layout, but the client ran on cpus %q and the server on %q", r.ID, r.ClientCPUs, appliedCpuset(r))
		}
		// The agent's own account: the cpus it could run on, and a CPU reading within them.
		var res workload.Result
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		cpus, _ := placement.ParseList(r.ClientCPUs)
		if cores, ok := res.ClientCores(); res.ClientCPUs != len(cpus) || !ok || cores > 1.02*float64(res.ClientCPUs) {
			t.Errorf("%s: the client on cpus %q read %.3f cores of %d", r.ID, r.ClientCPUs, cores, res.ClientCPUs)
		}
	}
	if len(byPair) != 2 {
		for _, r := range rows {
			t.Logf("%s: %s %s", r.ID, r.Status, r.Facts[plan.FactDuetPair])
		}
		t.Fatalf("%d pairs, want 2", len(byPair))
	}
	for tok, rs := range byPair {
		if len(rs) != 2 || rs[0].CellID == rs[1].CellID {
			t.Fatalf("pair %s: %d runs", tok, len(rs))
		}
		a, b := rs[0], rs[1]
		if a.Facts[plan.FactDuetPartner] != b.ID || b.Facts[plan.FactDuetPartner] != a.ID {
			t.Errorf("pair %s: partners %q %q", tok, a.Facts[plan.FactDuetPartner], b.Facts[plan.FactDuetPartner])
		}
		if a.Facts[plan.FactDuetSide][:1] == b.Facts[plan.FactDuetSide][:1] {
			t.Errorf("pair %s: both on side %s", tok, a.Facts[plan.FactDuetSide])
		}
		if a.Started.After(b.Ended) || b.Started.After(a.Ended) {
			t.Errorf("pair %s: runs did not overlap: %v–%v and %v–%v", tok, a.Started, a.Ended, b.Started, b.Ended)
		}
		if ca, cb := appliedCpuset(a), appliedCpuset(b); ca == "" || ca == cb {
			t.Errorf("pair %s: server cpusets %v and %v read back", tok, ca, cb)
		}
	}
	if left := platformtest.HostLeftovers(cfg.WorkRoot, sum.ExperimentID); len(left) > 0 {
		t.Errorf("leftovers: %v", left)
	}
}

func appliedCpuset(r results.RunRow) string {
	l, _ := r.Limits["limits"].(map[string]any)
	s, _ := l["cpuset"].(string)
	return s
}
