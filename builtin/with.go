package builtin

import (
	"time"

	"github.com/boxbench/boxbench/builtin/workloads"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
)

// Set is the tables of databases and of workload kinds of this build with rows added: what a
// test that adds a database or a workload kind in one place (the fake platform's,
// platform/fake) runs the spec, the planner and the runner with. Its methods are the package
// functions of the same names over its rows.
type Set struct {
	t table
	k []WorkloadKind
}

// defaultSet is this build's tables as they are.
func defaultSet() Set { return Set{table(Databases()), workloads.All()} }

// With is this build's databases and extra.
func With(extra ...Database) Set { return defaultSet().With(extra...) }

// With is s's databases and extra.
func (s Set) With(extra ...Database) Set {
	s.t = append(append(table{}, s.t...), extra...)
	return s
}

// WithWorkloads is s's workload kinds and extra.
func (s Set) WithWorkloads(extra ...WorkloadKind) Set {
	s.k = append(append([]WorkloadKind{}, s.k...), extra...)
	return s
}

func (s Set) DBMS(name string) (dbms.DBMS, error) { return s.t.dbms(name) }

func (s Set) Workload(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
	return s.workload(e, c)
}

func (s Set) Neighbour(ns *spec.Neighbour, window time.Duration) (workload.Workload, error) {
	return s.neighbour(ns, window)
}

func (s Set) Vocabulary(ps map[string]platform.Platform) spec.Vocabulary {
	v := s.t.vocabulary(ps)
	v.Workloads = workloads.Vocabulary(s.k)
	return v
}

func (s Set) Checker(ps map[string]platform.Platform, probe bool) plan.Checker {
	return s.t.checker(ps, probe)
}
