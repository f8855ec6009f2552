package builtin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver/cassandra"
	"github.com/boxbench/boxbench/driver/etcd"
	"github.com/boxbench/boxbench/driver/mongodb"
	"github.com/boxbench/boxbench/driver/mysql"
	"github.com/boxbench/boxbench/driver/postgres"
	"github.com/boxbench/boxbench/driver/redis"
	"github.com/boxbench/boxbench/workload/sysbench"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// Database is one row of the table of databases: everything about one database that is not
// the database's own description (package dbms, whose Traits say what it can do) lives here,
// so that adding a database is a row, and no platform, check or workload names one.
type Database struct {
	DBMS dbms.DBMS
	// Driver is the built-in generator's client for it, given the cell's options.
	Driver func(DriverOptions) ycsb.Opener
	// Sysbench is sysbench's driver for it (sysbench.Drivers); "" when sysbench cannot drive it.
	Sysbench string
	// Consistencies are the levels its driver takes as DriverOptions.Consistency (the spec's
	// workload.consistency); nil: it takes none.
	Consistencies []string
}

// DriverOptions are what a cell says about the client beyond the endpoint: the workload's
// consistency level and the topology's replication factor (a Cassandra ring's; others ignore
// them).
type DriverOptions struct {
	Consistency       string
	ReplicationFactor int
}

// plain is a driver that takes no options.
func plain(o ycsb.Opener) func(DriverOptions) ycsb.Opener {
	return func(DriverOptions) ycsb.Opener { return o }
}

// Databases is the table of the databases of this build, in the order drivers and messages
// list them.
func Databases() []Database {
	return []Database{
		{DBMS: dbms.PostgreSQL{}, Driver: plain(postgres.New), Sysbench: sysbench.DriverPgSQL},
		{DBMS: dbms.MariaDB{}, Driver: plain(mysql.New), Sysbench: sysbench.DriverMySQL},
		{DBMS: dbms.Redis{}, Driver: plain(redis.New)},
		{DBMS: dbms.Etcd{}, Driver: plain(etcd.New)},
		{DBMS: dbms.FerretDB{}, Driver: plain(mongodb.New)},
		{DBMS: dbms.Cassandra{}, Driver: func(o DriverOptions) ycsb.Opener {
			return cassandra.Opener(cassandra.Options{Consistency: o.Consistency, ReplicationFactor: o.ReplicationFactor})
		}, Consistencies: cassandra.Consistencies},
	}
}

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
func (t table) consistencies() map[string][]string {
	out := map[string][]string{}
	for _, r := range t {
		if r.Consistencies != nil {
			out[r.DBMS.Name()] = r.Consistencies
		}
	}
	return out
}

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
