package plan

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/boxbench/boxbench/testkit/vocabtest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/spec"
)

var update = flag.Bool("update", false, "rewrite golden files")

const src = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: p
dbms: postgresql
workload: {type: ycsb, duration: 10s}
dataset: {bound: memory}
limits: {memory: 1GiB}
matrix:
  platform: [native, docker]
  storage: [bind, overlay, blockdev]
  zip: {network: [host, bridge-direct], mix: [a, c]}
  exclude: [{platform: docker, storage: blockdev}]
repetitions: 2
seed: 7
`

// noContainerLayer mimics the native platform's static check.
func noContainerLayer(_ context.Context, c *Cell) error {
	if c.Platform == "native" && c.Storage == "overlay" {
		return errors.New("native has no container layer")
	}
	if c.Platform == "native" && c.Network == "bridge-direct" {
		return errors.New("native has no network bridge-direct")
	}
	return nil
}

func render(p *Plan) string {
	var b strings.Builder
	for _, c := range p.Cells {
		base := "-"
		if p.Baseline[c] != nil {
			base = p.Baseline[c].ID
		}
		fmt.Fprintf(&b, "cell %s records=%d baseline=%s\n", c.ID, c.Records, base)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "skip %s: %s\n", s.Cell.ID, s.Reason)
	}
	for i, r := range p.Runs {
		fmt.Fprintf(&b, "run %d %s\n", i+1, r.ID())
	}
	return b.String()
}

func TestExpandGolden(t *testing.T) {
	e, err := spec.Parse([]byte(src), "p.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	p, problems := Expand(context.Background(), e, uint64(*e.Seed), noContainerLayer)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	got := render(p)
	golden := "testdata/expand.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("plan differs from %s (run with -update to accept):\n%s", golden, got)
	}
}

// TestOrderIsBlocked: each round of a randomized order holds every cell exactly once, and
// the same seed gives the same order.
func TestOrderIsBlocked(t *testing.T) {
	cells := []*Cell{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	runs := Order(cells, 1, 5, "randomized", 42)
	if len(runs) != 20 {
		t.Fatalf("%d runs", len(runs))
	}
	for round := 0; round < 5; round++ {
		seen := map[string]bool{}
		for _, r := range runs[round*4 : round*4+4] {
			if r.Rep != round+1 || seen[r.Cell.ID] {
				t.Fatalf("round %d broken: %v", round+1, runs[round*4:round*4+4])
			}
			seen[r.Cell.ID] = true
		}
	}
	again := Order(cells, 1, 5, "randomized", 42)
	other := Order(cells, 1, 5, "randomized", 43)
	same, differ := true, false
	for i := range runs {
		same = same && runs[i].ID() == again[i].ID()
		differ = differ || runs[i].ID() != other[i].ID()
	}
	if !same || !differ {
		t.Errorf("seeded order: same seed equal=%v, other seed differs=%v", same, differ)
	}
	// Adding a round later does not change the earlier ones.
	first := Order(cells, 1, 3, "randomized", 42)
	for i := range first {
		if first[i].ID() != runs[i].ID() {
			t.Fatal("extending the rounds changed earlier runs")
		}
	}
}

func TestBaselineMatchesNothing(t *testing.T) {
	s := strings.Replace(src, "seed: 7\n", "seed: 7\nbaseline: {storage: blockdev, platform: docker}\n", 1)
	e, err := spec.Parse([]byte(s), "p.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	_, problems := Expand(context.Background(), e, 1, noContainerLayer)
	if len(problems) != 1 || !strings.Contains(problems[0].String(), "matches no cell") || problems[0].Line == 0 {
		t.Errorf("problems: %v", problems)
	}
}

// TestNothingRuns: with the database not installed every cell is skipped; the problem names
// the database and its install command, not an unmatched baseline (issue 19).
func TestNothingRuns(t *testing.T) {
	e, err := spec.Parse([]byte(src), "p.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	missing := func(context.Context, *Cell) error {
		return errors.New("redis is not installed on this host (redis-server missing): apt-get install -y redis-server")
	}
	_, problems := Expand(context.Background(), e, 1, missing)
	if len(problems) != 1 || strings.Contains(problems[0].String(), "baseline") ||
		strings.Count(problems[0].String(), "apt-get install -y redis-server") != 1 {
		t.Errorf("problems: %v", problems)
	}
}

func TestRecordsFromBound(t *testing.T) {
	e, _ := spec.Parse([]byte(src), "p.yaml", vocabtest.Vocabulary())
	mem, disk := Records(e, "memory", int64(e.Limits.Memory)), Records(e, "disk", int64(e.Limits.Memory))
	per := int64(10*100 + 24)
	if mem != (1<<30)/4/per || disk != (1<<30)*4/per || disk <= mem*8 {
		t.Errorf("memory-bound %d, disk-bound %d records", mem, disk)
	}
}

// TestClientPolicy: a cell's client policy comes from the matrix, else from placement, else
// normal; varying it gives each policy its own baseline cell.
func TestClientPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, edit string
		want       map[string]string // cell id → policy
	}{
		{"default", "", map[string]string{"platform=native": "normal", "platform=docker": "normal"}},
		{"placement", "placement: {clientPolicy: idle}\n", map[string]string{"platform=native": "idle", "platform=docker": "idle"}},
		{"matrix", "", map[string]string{
			"platform=native/clientPolicy=normal": "normal", "platform=native/clientPolicy=idle": "idle",
			"platform=docker/clientPolicy=normal": "normal", "platform=docker/clientPolicy=idle": "idle"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := "apiVersion: boxbench/v1alpha1\nkind: Experiment\nname: p\ndbms: redis\n" +
				"workload: {type: ycsb, duration: 1s}\ndataset: {records: 100}\nmatrix:\n  platform: [native, docker]\n"
			if tc.name == "matrix" {
				s += "  clientPolicy: [normal, idle]\n"
			}
			e, err := spec.Parse([]byte(s+tc.edit), "p.yaml", vocabtest.Vocabulary())
			if err != nil {
				t.Fatal(err)
			}
			p, problems := Expand(context.Background(), e, 1, func(context.Context, *Cell) error { return nil })
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			got := map[string]string{}
			for _, c := range p.Cells {
				got[c.ID] = c.ClientPolicy
				if b := p.Baseline[c]; b != nil && b.ClientPolicy != c.ClientPolicy {
					t.Errorf("cell %s (%s) has baseline %s (%s)", c.ID, c.ClientPolicy, b.ID, b.ClientPolicy)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("cells %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLimitKeys: limits varied by the matrix reach each cell's resources (the rest from
// limits:), a bound data set is sized from the cell's own memory, and each value gets its own
// baseline cell.
func TestLimitKeys(t *testing.T) {
	s := strings.NewReplacer("limits: {memory: 1GiB}", "limits: {memory: 1GiB, cpuWeight: 300}",
		"  storage: [bind, overlay, blockdev]\n", "  cpus: [0.5, 2]\n  memory: [512MiB, 2GiB]\n",
		"  exclude: [{platform: docker, storage: blockdev}]\n", "").Replace(src)
	e, err := spec.Parse([]byte(s), "p.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	p, problems := Expand(context.Background(), e, 1, noContainerLayer)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	seen := map[string]bool{}
	for _, c := range p.Cells {
		r := c.Resources
		if r.CPUWeight != 300 || fmt.Sprint(r.CPUs) != c.Params["cpus"] {
			t.Errorf("%s: resources %+v", c.ID, r)
		}
		wantMem := int64(512 << 20)
		if c.Params["memory"] == "2GiB" {
			wantMem = 2 << 30
		}
		if r.MemoryBytes != wantMem || c.Records != Records(e, "memory", wantMem) {
			t.Errorf("%s: memory %d, records %d", c.ID, r.MemoryBytes, c.Records)
		}
		if b := p.Baseline[c]; b != nil && (b.Params["cpus"] != c.Params["cpus"] || b.Params["memory"] != c.Params["memory"]) {
			t.Errorf("%s compared with %s: another limit", c.ID, b.ID)
		}
		seen[c.Params["cpus"]+"/"+c.Params["memory"]] = true
	}
	if len(seen) != 4 {
		t.Errorf("limit combinations %v", seen)
	}
	bad := strings.Replace(s, "cpus: [0.5, 2]", "cpus: [0, .nan, x]", 1)
	if _, err := spec.Parse([]byte(bad), "p.yaml", vocabtest.Vocabulary()); err == nil || strings.Count(err.Error(), "not a CPU count") < 2 {
		t.Errorf("bad cpus: %v", err)
	}
	small := strings.Replace(s, "memory: [512MiB, 2GiB]", "memory: [32MiB, 2GB]", 1)
	if _, err := spec.Parse([]byte(small), "p.yaml", vocabtest.Vocabulary()); err == nil ||
		!strings.Contains(err.Error(), "too small") || !strings.Contains(err.Error(), "did you mean 2GiB") {
		t.Errorf("bad memory: %v", err)
	}
}

// TestCheckOncePerChoice: the host is asked once per distinct (platform, dbms, storage,
// network, runtime, topology), not once per cell: a sweep of a hundred rates over two
// platforms asks twice (issue 32: a plan of a thousand cells asked dockerd a thousand times).
func TestCheckOncePerChoice(t *testing.T) {
	rates := make([]string, 100)
	for i := range rates {
		rates[i] = strconv.Itoa(100 * (i + 1))
	}
	s := `apiVersion: boxbench/v1alpha1
kind: Experiment
name: once
dbms: redis
workload: {type: ycsb, mix: a, threads: 1, duration: 5s}
dataset: {records: 100}
matrix:
  platform: [native, docker]
  workload.targetRate: [` + strings.Join(rates, ", ") + `]
repetitions: 1
`
	e, err := spec.Parse([]byte(s), "p.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	p, problems := Expand(context.Background(), e, 1, func(_ context.Context, c *Cell) error {
		calls++
		if c.Platform == "docker" {
			return errors.New("no engine")
		}
		return nil
	})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if calls != 2 || len(p.Cells) != 100 || len(p.Skipped) != 100 {
		t.Errorf("%d checks, %d cells, %d skipped; want 2, 100, 100", calls, len(p.Cells), len(p.Skipped))
	}
}

// TestBaselineNotACell (issue 45): a baseline that gives a cell a baseline the matrix does not
// form (here excluded) is a problem naming the selector, the cell, the baseline it looked for,
// the cells the selector does select, the keys in which the nearest differs and a baseline that
// would do — not a cell planned as "no baseline: it was skipped".
func TestBaselineNotACell(t *testing.T) {
	s := strings.NewReplacer("  storage: [bind, overlay, blockdev]\n", "  storage: [bind, overlay]\n",
		"  exclude: [{platform: docker, storage: blockdev}]\n", "  exclude: [{platform: native, storage: overlay}]\n",
		"seed: 7\n", "seed: 7\nbaseline: {platform: native}\n").Replace(src)
	e, err := spec.Parse([]byte(s), "p.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	_, problems := Expand(context.Background(), e, 1, func(context.Context, *Cell) error { return nil })
	if len(problems) != 1 || problems[0].Field != "baseline" || problems[0].Line == 0 {
		t.Fatalf("problems: %v", problems)
	}
	msg := problems[0].String()
	for _, w := range []string{
		"baseline: {platform: native} gives cell platform=docker/storage=overlay/network=bridge-direct/mix=c the baseline platform=native/storage=overlay/network=bridge-direct/mix=c, which is not a cell of the matrix (nor is that of 1 more cells)",
		"the cells it selects are platform=native/storage=bind/network=bridge-direct/mix=c, platform=native/storage=bind/network=host/mix=a",
		"differs in storage",
		"e.g. baseline: {platform: native, storage: bind}",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("problem lacks %q:\n%s", w, msg)
		}
	}
	// The baseline the message proposes plans every cell against a cell of the matrix.
	s = strings.Replace(s, "baseline: {platform: native}", "baseline: {platform: native, storage: bind}", 1)
	e, err = spec.Parse([]byte(s), "p.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	p, problems := Expand(context.Background(), e, 1, func(context.Context, *Cell) error { return nil })
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, c := range p.Cells {
		if p.Baseline[c] == nil {
			t.Errorf("cell %s has no baseline", c.ID)
		}
	}
}

// TestBaselineSkipped: a cell whose baseline exists but cannot run here has it in
// BaselineSkipped (what plan then says of it is true), never in Baseline.
func TestBaselineSkipped(t *testing.T) {
	e, err := spec.Parse([]byte(src), "p.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	p, problems := Expand(context.Background(), e, 1, noContainerLayer)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	want := map[string]string{
		"platform=docker/storage=overlay/network=host/mix=a":          "platform=native/storage=overlay/network=host/mix=a",
		"platform=docker/storage=bind/network=bridge-direct/mix=c":    "platform=native/storage=bind/network=bridge-direct/mix=c",
		"platform=docker/storage=overlay/network=bridge-direct/mix=c": "platform=native/storage=overlay/network=bridge-direct/mix=c",
	}
	for _, c := range p.Cells {
		b, skipped := p.Baseline[c], p.BaselineSkipped[c]
		if (b == nil) == (skipped == nil) {
			t.Errorf("cell %s: baseline %v, skipped baseline %v: want exactly one", c.ID, b, skipped)
			continue
		}
		if w, ok := want[c.ID]; ok && (skipped == nil || skipped.ID != w) {
			t.Errorf("cell %s: skipped baseline %v, want %s", c.ID, skipped, w)
		} else if !ok && skipped != nil {
			t.Errorf("cell %s: skipped baseline %s, want a runnable one", c.ID, skipped.ID)
		}
	}
}
