package runner_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/boxbench/boxbench/agent/agenttest"
	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/placement"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/spec"
)

// untilSpec is an A/A pair of native cells, three rounds, in the order given.
const untilSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: runner-until-%s
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 1, duration: 1s, warmup: 0s}
dataset: {records: 500, fieldCount: 2, fieldLength: 20}
limits: {memory: 256MiB}
matrix:
  replica: [a, b]
baseline: {replica: a}
repetitions: 3
order: %s
quietStart: {timeout: 0s}
`

// UntilRound stops after the given round, and a resumed run with a later one continues from
// there without redoing a stored run: what lets scripts/precision.sh interleave experiments
// round by round. Both orders (a round of runs, a round of duets).
func TestUntilRound(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server", "taskset")
	for _, order := range []string{"randomized", "duet"} {
		t.Run(order, func(t *testing.T) {
			if order == "duet" && len(placement.HostCPUs()) < placement.MinDuetCPUs {
				testenv.Skip(t, "a duet needs 2 cpus")
			}
			work, out := testenv.WorkRoot(t), t.TempDir()
			log := slog.New(slog.DiscardHandler)
			ps := map[string]platform.Platform{"native": builtin.Platforms(log)["native"]}
			text := fmt.Sprintf(untilSpec, order, order)
			e, err := spec.Parse([]byte(text), "until.yaml", builtin.Vocabulary(ps))
			if err != nil {
				t.Fatal(err)
			}
			argv, env := agenttest.Command()
			// A duet round is one run of b beside one of a; a randomized round one run of each.
			for _, until := range []int{1, 2} {
				sum, err := runner.Run(context.Background(), runner.Config{Spec: e, SpecText: []byte(text), OutDir: out,
					WorkRoot: work, Resume: until > 1, UntilRound: until, Platforms: ps, Workloads: builtin.Workload,
					Neighbours: builtin.Neighbour, DBMS: builtin.DBMS, Check: builtin.Checker(ps, false), Log: log,
					Agent: runner.AgentCommand{Argv: argv, Env: env}})
				if err != nil {
					t.Fatal(err)
				}
				if sum.OK != 2*until || sum.Failed != 0 {
					t.Fatalf("until round %d: %+v, want %d ok runs", until, sum, 2*until)
				}
			}
			var ids []string
			for _, r := range storedRuns(t, out) {
				ids = append(ids, r.ID)
			}
			slices.Sort(ids)
			want := []string{"replica=a#1", "replica=a#2", "replica=b#1", "replica=b#2"}
			if !slices.Equal(ids, want) {
				t.Errorf("stored runs %v, want %v (rounds 1 and 2 only, none twice)", ids, want)
			}
		})
	}
}
