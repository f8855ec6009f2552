package builtin

import (
	"time"

	"github.com/boxbench/boxbench/builtin/workloads"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
)

// WorkloadKind is one row of the table of workload kinds (package builtin/workloads, the only
// list).
type WorkloadKind = workloads.Kind

// Workloads is the table of the workload kinds of this build.
func Workloads() []WorkloadKind { return workloads.All() }

// Workload builds (and validates) the workload of one cell.
func Workload(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
	return defaultSet().Workload(e, c)
}

// Neighbour builds a neighbour's workload to run for the whole measured window.
func Neighbour(ns *spec.Neighbour, window time.Duration) (workload.Workload, error) {
	return defaultSet().Neighbour(ns, window)
}

// workload builds the workload of one cell with the rows of s.
func (s Set) workload(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
	// An experiment an agent's job carried (JSON) has its kinds' own sections still to decode.
	if err := e.DecodeOwn(workloads.Vocabulary(s.k)); err != nil {
		return nil, err
	}
	w := e.WorkloadFor(c.Workload, c.Params) // the cell's sweep keys applied
	k, err := workloads.Find(s.k, w.Type, func(k WorkloadKind) bool { return k.Build != nil }, "is not built in")
	if err != nil {
		return nil, err
	}
	wc := workloads.Cell{DBMS: c.DBMS, Mix: c.Mix, Records: c.Records}
	if c.Topology != nil {
		wc.ReplicationFactor = c.Topology.ReplicationFactor
	}
	env := workloads.Env{DBMS: s.t.dbms, Drivers: s.t.drivers, SysbenchDriver: s.t.sysbenchDriver}
	return k.Build(e, w, wc, env)
}

func (s Set) neighbour(ns *spec.Neighbour, window time.Duration) (workload.Workload, error) {
	k, err := workloads.Find(s.k, ns.Workload.Type, func(k WorkloadKind) bool { return k.Neighbour != nil }, "cannot run as a neighbour")
	if err != nil {
		return nil, err
	}
	return k.Neighbour(&ns.Workload, window)
}
