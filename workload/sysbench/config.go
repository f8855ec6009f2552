package sysbench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/boxbench/boxbench/dbms"
)

// Tests are the sysbench OLTP tests this adapter runs. All of them use the schema of
// sysbench's oltp_common.lua (tables sbtest1..N with id, k, c, pad and a secondary index on
// k), so they share one loaded data set.
var Tests = []string{"oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select", "oltp_insert"}

// Drivers are sysbench's database drivers in Debian's build (--db-driver); which database each
// drives is the wiring's table (builtin.Databases).
var Drivers = []string{DriverPgSQL, DriverMySQL}

const (
	DriverPgSQL = "pgsql" // libpq: PostgreSQL
	DriverMySQL = "mysql" // MariaDB Connector/C
)

// Config configures one sysbench workload. Start from DefaultConfig; New validates.
//
// sysbench takes whole seconds for --time, --report-interval and --report-checkpoints and a
// whole number for --rate, so Duration, Warmup and Interval must be whole seconds and Rate a
// whole number of transactions per second.
type Config struct {
	// Test is one of Tests.
	Test string
	// Tables and TableSize shape the data set (sysbench --tables, --table-size).
	Tables    int
	TableSize int64
	// Threads is the number of client threads, each with its own connection.
	Threads int
	// Duration is the measured window, after Warmup.
	Duration time.Duration
	// Warmup runs before the measured window in the same sysbench process; a report
	// checkpoint at its end resets sysbench's counters and latency histogram, so the summary
	// and histogram cover only the measured window. 0 measures from the start.
	Warmup time.Duration
	// Rate is the target rate in transactions per second over all threads (open loop,
	// sysbench --rate); 0 runs a closed loop.
	Rate float64
	// Interval is the length of one stored interval (sysbench --report-interval).
	Interval time.Duration
	// DBMS is the database the workload runs against (its credentials; part of LoadKey), and
	// Driver the sysbench driver that speaks to it (one of Drivers).
	DBMS   dbms.DBMS
	Driver string
}

// DefaultConfig returns sysbench's own defaults where it has one (1 table, 10000 rows, 1
// thread), oltp_read_write, one minute measured after ten seconds of warm-up, closed loop. The
// database and its sysbench driver are the caller's (the table of databases names them).
func DefaultConfig() Config {
	return Config{Test: "oltp_read_write", Tables: 1, TableSize: 10000, Threads: 1,
		Duration: time.Minute, Warmup: 10 * time.Second, Interval: time.Second}
}

// Validate returns every problem of c at once (errors.Join), each naming the field, the bad
// value and what is valid.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, v any, valid string) {
		errs = append(errs, fmt.Errorf("%s: %v is invalid: %s", field, v, valid))
	}
	if !slices.Contains(Tests, c.Test) {
		bad("Test", fmt.Sprintf("%q", c.Test), "one of "+strings.Join(Tests, ", "))
	}
	dbName := "none"
	if c.DBMS == nil {
		bad("DBMS", dbName, "the database sysbench runs against (its client credentials)")
	} else {
		dbName = c.DBMS.Name()
	}
	if !slices.Contains(Drivers, c.Driver) {
		bad("Driver", fmt.Sprintf("%q", c.Driver), "one of "+strings.Join(Drivers, ", ")+" (for dbms "+dbName+")")
	}
	if c.Tables < 1 {
		bad("Tables", c.Tables, "must be at least 1")
	}
	if c.TableSize < 1 {
		bad("TableSize", c.TableSize, "must be at least 1")
	}
	if c.Threads < 1 {
		bad("Threads", c.Threads, "must be at least 1")
	}
	wholeSeconds := func(field string, d, least time.Duration) {
		switch {
		case d < least:
			bad(field, d, fmt.Sprintf("must be at least %s", least))
		case d%time.Second != 0:
			bad(field, d, "must be a whole number of seconds (sysbench counts in seconds)")
		}
	}
	wholeSeconds("Duration", c.Duration, time.Second)
	wholeSeconds("Warmup", c.Warmup, 0)
	wholeSeconds("Interval", c.Interval, time.Second)
	if c.Interval > 0 && c.Interval%time.Second == 0 {
		if c.Warmup%c.Interval != 0 {
			bad("Warmup", c.Warmup, fmt.Sprintf("must be a multiple of Interval (%s), so that no interval straddles the warm-up's end", c.Interval))
		}
	}
	if !(c.Rate >= 0) || math.IsInf(c.Rate, 0) || c.Rate != math.Trunc(c.Rate) || c.Rate > math.MaxInt32 {
		bad("Rate", c.Rate, "must be a whole number of transactions per second (sysbench --rate), or 0 for a closed loop")
	}
	return errors.Join(errs...)
}
