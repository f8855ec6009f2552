package builtin

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/driver/noop"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
)

// fakeDB is a database added in one place: a row of the table. It is described like Redis
// but named otherwise; its traits are its own (no unix socket), so nothing may fall back on a
// name.
type fakeDB struct{ redis.Redis }

func (fakeDB) Name() string { return "fakedb" }
func (fakeDB) Traits() dbms.Traits {
	return dbms.Traits{NoSocket: "a fake"}
}

// TestFakeDatabase adds a database as one row and sees it validated by the spec and planned
// on every platform of this build: each cell is runnable or skipped for a reason about this
// host, never for an unknown name; its workload builds with the row's driver.
func TestFakeDatabase(t *testing.T) {
	tb := With(Database{DBMS: fakeDB{}, Driver: databases.Plain(noop.New)})
	ps := Platforms(nil)
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	slices.Sort(names)
	text := `apiVersion: boxbench/v1alpha1
kind: Experiment
name: fake
dbms: fakedb
workload: {type: ycsb, mix: read-heavy, threads: 1, duration: 1s, warmup: 0s}
dataset: {records: 100}
matrix:
  platform: [` + strings.Join(names, ", ") + `]
repetitions: 1
`
	e, err := spec.Parse([]byte(text), "fake.yaml", tb.Vocabulary(ps))
	if err != nil {
		t.Fatal(err)
	}
	p, problems := plan.Expand(context.Background(), e, 1, tb.Checker(ps, false))
	if p == nil {
		t.Fatalf("not planned: %v", problems)
	}
	seen := map[string]bool{}
	for _, c := range p.Cells {
		seen[c.Platform] = true
		if _, err := tb.Workload(e, c); err != nil {
			t.Errorf("%s: workload: %v", c.ID, err)
		}
	}
	for _, s := range p.Skipped {
		seen[s.Cell.Platform] = true
		if strings.Contains(s.Reason, "unknown dbms") || strings.Contains(s.Reason, "fakedb\"") {
			t.Errorf("%s skipped for its name: %s", s.Cell.ID, s.Reason)
		}
		t.Logf("%s: %s", s.Cell.ID, s.Reason)
	}
	for _, n := range names {
		if !seen[n] {
			t.Errorf("platform %s has no cell of the fake database", n)
		}
	}
	if _, err := tb.t.sysbenchDriver("fakedb"); err == nil || !strings.Contains(err.Error(), "one of postgresql, mariadb") {
		t.Errorf("sysbench for the fake database: %v", err)
	}
}
