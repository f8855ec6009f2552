// Package workloads is the table of the workload kinds of this build: one row per kind, the
// only list. A row says what the spec may name (spec.WorkloadKind, through the vocabulary) and
// builds a cell's workload of its kind; what a built workload can do beyond the contract it
// says itself, as data (workload.Traits). It sits below package builtin, like the table of
// databases, so that tests of packages builtin imports can take the same vocabulary
// (testkit/vocabtest).
package workloads

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// Kind is one row: a kind of workload the spec's workload: type names.
type Kind struct {
	Name string
	// Build builds the measured workload of a cell (w with the cell's sweep keys applied); nil
	// when the kind cannot be measured (it runs beside the database only).
	Build func(e *spec.Experiment, w *spec.Workload, c Cell, env Env) (workload.Workload, error)
	// Neighbour builds the kind as a neighbour's workload, running for the whole measured
	// window; nil when it cannot run inside a neighbour's box.
	Neighbour func(w *spec.Workload, window time.Duration) (workload.Workload, error)
	// Threads is the default of threads (0: 8); Records says a cell needs a data set of
	// records; Remote that the kind can run at a client site (what it builds says so too,
	// workload.Traits.Remote). See spec.WorkloadKind.
	Threads         int
	Records, Remote bool
	// Sweeps and WholeSeconds: as spec.WorkloadKind's (the sweep keys that apply to it, ...).
	Sweeps       []string
	WholeSeconds bool
	// Own decodes and checks the kind's own section: the fields it takes that spec.Workload
	// has not, kept in spec.Workload.Own as a value of the kind's own package; nil when it
	// takes none of its own (spec.OwnKind).
	Own *spec.OwnKind
}

// Cell is what building a measured workload needs of the planned cell.
type Cell struct {
	DBMS    string
	Mix     string // the cell's mix (the matrix key mix, or the workload's own)
	Records int64  // the cell's record count (0: none)
	// ReplicationFactor is the cell's topology's (0 without a topology).
	ReplicationFactor int
}

// Env is what building a workload may use of the table of databases (builtin's, with the rows
// a test added).
type Env struct {
	DBMS           func(name string) (dbms.DBMS, error)
	Drivers        func(o databases.DriverOptions) map[string]ycsb.Opener
	SysbenchDriver func(name string) (string, error)
}

// Vocabulary is what the spec may name of rows (spec.Vocabulary.Workloads).
func Vocabulary(rows []Kind) []spec.WorkloadKind {
	out := make([]spec.WorkloadKind, len(rows))
	for i, k := range rows {
		out[i] = spec.WorkloadKind{Name: k.Name, Measured: k.Build != nil, Neighbour: k.Neighbour != nil,
			Threads: k.Threads, Records: k.Records, Remote: k.Remote, Sweeps: k.Sweeps,
			WholeSeconds: k.WholeSeconds, Own: k.Own}
	}
	return out
}

// Find returns the row of kind name, or an error naming the valid ones (those ok accepts).
func Find(rows []Kind, name string, ok func(Kind) bool, what string) (Kind, error) {
	var valid []string
	for _, k := range rows {
		if !ok(k) {
			continue
		}
		if k.Name == name {
			return k, nil
		}
		valid = append(valid, k.Name)
	}
	return Kind{}, fmt.Errorf("workload type %q %s (valid: %s)", name, what, strings.Join(valid, ", "))
}
