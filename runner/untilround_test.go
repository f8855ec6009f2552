package runner_test

import (
	"context"
	"slices"
	"testing"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/testkit/testenv"
)

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
			out := t.TempDir()
			// An A/A pair of native cells, three rounds, in the order given.
			text := aaSpec{name: "runner-until-" + order, duration: "1s", warmup: "0s", reps: 3, order: order}.String()
			cfg := realConfig(t, "native", text, out)
			// A duet round is one run of b beside one of a; a randomized round one run of each.
			for _, until := range []int{1, 2} {
				cfg.Resume, cfg.UntilRound = until > 1, until
				sum, err := runner.Run(context.Background(), cfg)
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
