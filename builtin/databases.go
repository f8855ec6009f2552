package builtin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// Database is one row of the table of databases (package builtin/databases, the only list).
type Database = databases.Database

// DriverOptions are what a cell says about the client beyond the endpoint.
type DriverOptions = databases.DriverOptions

// Databases is the table of the databases of this build, in the order drivers and messages
// list them.
func Databases() []Database { return databases.All() }

// table is a set of rows looked up by name.
type table []Database

func (t table) row(name string) (Database, error) {
	for _, r := range t {
		if r.DBMS.Name() == name {
			return r, nil
		}
	}
	return Database{}, fmt.Errorf("unknown dbms %q (valid: %v)", name, t.names())
}

// names are the rows' names, sorted (the spec's vocabulary).
func (t table) names() []string {
	out := make([]string, len(t))
	for i, r := range t {
		out[i] = r.DBMS.Name()
	}
	slices.Sort(out)
	return out
}

// consistencies are the levels of workload.consistency by the dbms whose driver takes one.
func (t table) consistencies() map[string][]string { return databases.Consistencies(t) }

// drivers are the generator's clients of every row, for options o.
func (t table) drivers(o DriverOptions) map[string]ycsb.Opener {
	out := make(map[string]ycsb.Opener, len(t))
	for _, r := range t {
		out[r.DBMS.Name()] = r.Driver(o)
	}
	return out
}

// sysbenchDriver is the sysbench driver of dbms name, or an error listing those it has one for.
func (t table) sysbenchDriver(name string) (string, error) {
	var with []string
	for _, r := range t {
		if r.Sysbench == "" {
			continue
		}
		if r.DBMS.Name() == name {
			return r.Sysbench, nil
		}
		with = append(with, r.DBMS.Name())
	}
	return "", fmt.Errorf("DBMS: %q is invalid: one of %s (sysbench has no driver for others)", name, strings.Join(with, ", "))
}
