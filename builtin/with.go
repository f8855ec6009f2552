package builtin

import (
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
)

// Set is the table of databases of this build with rows added: what a test that adds a
// database in one place (the fake platform's, platform/fake) runs the spec, the planner and
// the runner with. Its methods are the package functions of the same names over its rows.
type Set struct{ t table }

// With is this build's databases and extra.
func With(extra ...Database) Set { return Set{append(table(Databases()), extra...)} }

func (s Set) DBMS(name string) (dbms.DBMS, error) { return s.t.dbms(name) }

func (s Set) Workload(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
	return s.t.workload(e, c)
}

func (s Set) Vocabulary(ps map[string]platform.Platform) spec.Vocabulary { return s.t.vocabulary(ps) }

func (s Set) Checker(ps map[string]platform.Platform, probe bool) plan.Checker {
	return s.t.checker(ps, probe)
}
