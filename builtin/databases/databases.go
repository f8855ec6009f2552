// Package databases is the table of the databases of this build: one row a database, holding
// the database's own description (its package under dbms/) with its clients (the generator's
// driver, sysbench's driver). It is the only list of databases: builtin wires it into the spec, the
// planner and the workloads, and the packages below the platforms (tests of a platform or an
// image builder, doctor) read it here, because this package imports no platform.
package databases

import (
	"fmt"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/dbms"
	cassandradb "github.com/boxbench/boxbench/dbms/cassandra"
	etcddb "github.com/boxbench/boxbench/dbms/etcd"
	"github.com/boxbench/boxbench/dbms/ferretdb"
	"github.com/boxbench/boxbench/dbms/mariadb"
	"github.com/boxbench/boxbench/dbms/postgresql"
	redisdb "github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/driver/cassandra"
	"github.com/boxbench/boxbench/driver/etcd"
	"github.com/boxbench/boxbench/driver/mongodb"
	"github.com/boxbench/boxbench/driver/mysql"
	"github.com/boxbench/boxbench/driver/postgres"
	"github.com/boxbench/boxbench/driver/redis"
	"github.com/boxbench/boxbench/workload/sysbench"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// Database is one row of the table: everything about one database that is not the database's
// own description (its package under dbms/, whose Traits say what it can do) lives here, so
// that adding a database is a row, and no platform, check or workload names one.
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

// Plain is a driver that takes no options.
func Plain(o ycsb.Opener) func(DriverOptions) ycsb.Opener {
	return func(DriverOptions) ycsb.Opener { return o }
}

// All is the table, in the order drivers and messages list them.
func All() []Database {
	return []Database{
		{DBMS: postgresql.PostgreSQL{}, Driver: Plain(postgres.New), Sysbench: sysbench.DriverPgSQL},
		{DBMS: mariadb.MariaDB{}, Driver: Plain(mysql.New), Sysbench: sysbench.DriverMySQL},
		{DBMS: redisdb.Redis{}, Driver: Plain(redis.New)},
		{DBMS: etcddb.Etcd{}, Driver: Plain(etcd.New)},
		{DBMS: ferretdb.FerretDB{}, Driver: Plain(mongodb.New)},
		{DBMS: cassandradb.Cassandra{}, Driver: func(o DriverOptions) ycsb.Opener {
			return cassandra.Opener(cassandra.Options{Consistency: o.Consistency, ReplicationFactor: o.ReplicationFactor})
		}, Consistencies: cassandra.Consistencies},
	}
}

// DBMSs are the table's databases sorted by name (the order doctor and image builds list them).
func DBMSs() []dbms.DBMS {
	out := make([]dbms.DBMS, 0, len(All()))
	for _, r := range All() {
		out = append(out, r.DBMS)
	}
	slices.SortFunc(out, func(a, b dbms.DBMS) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Names are the table's database names, sorted (the spec's vocabulary).
func Names() []string {
	out := make([]string, 0, len(All()))
	for _, d := range DBMSs() {
		out = append(out, d.Name())
	}
	return out
}

// Consistencies are the levels of workload.consistency by the database of rows whose driver
// takes one.
func Consistencies(rows []Database) map[string][]string {
	out := map[string][]string{}
	for _, r := range rows {
		if r.Consistencies != nil {
			out[r.DBMS.Name()] = r.Consistencies
		}
	}
	return out
}

// Get is the named database, or an error listing the valid names.
func Get(name string) (dbms.DBMS, error) { return find(All(), name) }

func find(rows []Database, name string) (dbms.DBMS, error) {
	var names []string
	for _, r := range rows {
		if r.DBMS.Name() == name {
			return r.DBMS, nil
		}
		names = append(names, r.DBMS.Name())
	}
	slices.Sort(names)
	return nil, fmt.Errorf("unknown dbms %q (valid: %v)", name, names)
}

// CheckTopology returns the problems of t for the named database of rows (the database's own
// rule, Clustered.CheckTopology); one problem when it has no topology at all, naming those
// that have one.
func CheckTopology(rows []Database, name string, t dbms.Topology) []string {
	d, err := find(rows, name)
	if err != nil {
		return []string{err.Error()}
	}
	if c, ok := dbms.ClusteredOf(d); ok {
		return c.CheckTopology(t)
	}
	var with []string
	for _, r := range rows {
		if _, ok := dbms.ClusteredOf(r.DBMS); ok {
			with = append(with, r.DBMS.Name())
		}
	}
	slices.Sort(with)
	return []string{"dbms " + name + " runs as one server here: it has no topology (databases with one: " + strings.Join(with, ", ") + ")"}
}
