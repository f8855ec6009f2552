package sysbench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/mariadb"
	"github.com/boxbench/boxbench/dbms/postgresql"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/testkit/testdb"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/workload"
)

// pgConfig is the default configuration against PostgreSQL, the database most tests run.
func pgConfig() Config {
	c := DefaultConfig()
	c.DBMS, c.Driver = postgresql.PostgreSQL{}, DriverPgSQL
	return c
}

func TestValidate(t *testing.T) {
	if err := pgConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	c := Config{Test: "tpcc", Tables: 0, TableSize: -1, Threads: 0, Duration: 1500 * time.Millisecond,
		Warmup: -time.Second, Rate: 10.5, Interval: 0, DBMS: redis.Redis{}, Driver: "redis"}
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, field := range []string{"Test:", "Tables:", "TableSize:", "Threads:", "Duration:", "Warmup:", "Rate:", "Interval:", "Driver:"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error does not name %s: %v", field, err)
		}
	}
	c = pgConfig()
	c.Interval, c.Warmup = 2*time.Second, 3*time.Second
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "multiple of Interval") {
		t.Errorf("warm-up not a multiple of the interval: %v", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New accepted a zero config")
	}
}

func TestNames(t *testing.T) {
	c := pgConfig()
	c.Test, c.Tables, c.TableSize, c.DBMS, c.Driver = "oltp_write_only", 4, 1000, mariadb.MariaDB{}, DriverMySQL
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Test = "oltp_point_select"
	w2, _ := New(c)
	if w.Name() != "sysbench/oltp_write_only" || w.LoadKey() != "sysbench/oltp/dbms=mariadb/tables=4/tableSize=1000" {
		t.Errorf("Name %q LoadKey %q", w.Name(), w.LoadKey())
	}
	if w.LoadKey() != w2.LoadKey() {
		t.Error("OLTP tests share one data set, yet their load keys differ")
	}
}

func TestRunArgv(t *testing.T) {
	c := pgConfig()
	c.Test, c.Tables, c.TableSize, c.Threads, c.Warmup, c.Duration, c.Rate = "oltp_point_select", 2, 500, 4, 5*time.Second, 30*time.Second, 300
	w, _ := New(c)
	tgt := workload.Target{DBMS: "postgresql", Endpoint: driver.Endpoint{Host: "127.0.0.1", Port: 5433}}
	argv, err := w.runArgv("sysbench", tgt)
	if err != nil {
		t.Fatal(err)
	}
	want := "sysbench oltp_point_select --db-driver=pgsql --pgsql-user=boxbench --pgsql-db=postgres --pgsql-host=127.0.0.1 --pgsql-port=5433 " +
		"--tables=2 --table-size=500 --threads=4 --time=35 --report-interval=1 --histogram=on --percentile=99 --forced-shutdown=10 " +
		"--report-checkpoints=5 --rate=300 run"
	if got := strings.Join(argv, " "); got != want {
		t.Errorf("argv\n got %s\nwant %s", got, want)
	}
	c.DBMS, c.Driver = mariadb.MariaDB{}, DriverMySQL
	w, _ = New(c)
	tgt = workload.Target{DBMS: "mariadb", Endpoint: driver.Endpoint{Unix: "/run/x/mysqld.sock"}, User: "u", Database: "d"}
	conn, err := w.connArgs(tgt)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(conn, " "); got != "--db-driver=mysql --mysql-user=u --mysql-db=d --mysql-host=localhost --mysql-socket=/run/x/mysqld.sock" {
		t.Errorf("conn = %s", got)
	}
	if _, err := w.connArgs(workload.Target{DBMS: "postgresql"}); err == nil {
		t.Error("a target of another dbms was accepted")
	}
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	w, _ := New(pgConfig())
	_, err := w.Run(context.Background(), workload.Target{}, workload.Clock{Start: time.Now()})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install sysbench") {
		t.Errorf("err = %v", err)
	}
	if err := w.Load(context.Background(), workload.Target{}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Load: err = %v", err)
	}
}

// TestIntegration loads and runs sysbench against real servers, closed and open loop.
func TestIntegration(t *testing.T) {
	for _, db := range []dbms.DBMS{postgresql.PostgreSQL{}, mariadb.MariaDB{}} {
		name := db.Name()
		t.Run(name, func(t *testing.T) {
			testenv.NeedRoot(t)
			testenv.NeedCommands(t, "sysbench")
			box, d := testdb.Start(t, db)
			cred := d.Client()
			tgt := workload.Target{DBMS: name, Endpoint: box.Endpoint(), User: cred.User, Database: cred.Database}
			c := pgConfig()
			c.DBMS, c.Tables, c.TableSize, c.Threads = db, 2, 2000, 2
			c.Driver = map[string]string{"postgresql": DriverPgSQL, "mariadb": DriverMySQL}[name]
			c.Warmup, c.Duration = time.Second, 2*time.Second
			w, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := w.Load(ctx, tgt); err != nil {
				t.Fatal(err)
			}
			clk := workload.Clock{Start: time.Now()}
			res, err := w.Run(ctx, tgt, clk)
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, res, workload.ModeClosed, 1)

			c.Test, c.Rate, c.Warmup = "oltp_point_select", 200, 0
			w, _ = New(c)
			res, err = w.Run(ctx, tgt, workload.Clock{Start: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, res, workload.ModeOpen, 0)
			if tx := res.Ops[0].Count; tx < 200 || tx > 600 {
				t.Errorf("open loop at 200/s for 2 s ran %d transactions", tx)
			}
		})
	}
}

func checkRun(t *testing.T, res *workload.Result, mode workload.Mode, warmIntervals int) {
	t.Helper()
	if res.Mode != mode || len(res.Ops) == 0 {
		t.Fatalf("mode %s, ops %+v", res.Mode, res.Ops)
	}
	op := res.Ops[0]
	if op.Op != Op || op.Series != "latency" || op.Count == 0 || op.P50 <= 0 || op.P99 < op.P50 || op.Max < op.P99 {
		t.Errorf("op = %+v", op)
	}
	h, err := hdrhistogram.Decode(op.Hist)
	if err != nil || h.TotalCount() == 0 || h.TotalCount() > op.Count {
		t.Errorf("hist: %v, %d values for %d transactions", err, h.TotalCount(), op.Count)
	}
	// sysbench stops starting transactions at --time and then waits for those in flight.
	if res.Measured < 1900*time.Millisecond || res.Measured > 4*time.Second {
		t.Errorf("Measured = %s", res.Measured)
	}
	if res.ClientCPU <= 0 {
		t.Error("no client CPU time")
	}
	// sysbench's reporting thread can skip an interval line on a loaded host, so the number of
	// intervals is not asserted; their marking is: warm-up intervals (at most one per second of
	// warm-up) come first, measured ones after, all on the run's clock.
	warm, measured := 0, 0
	for _, iv := range res.Intervals {
		if iv.Start < 0 || iv.End > 10*time.Second {
			t.Errorf("interval off the run's clock: %+v", iv)
		}
		switch iv.Phase {
		case workload.PhaseWarmup:
			if measured > 0 {
				t.Errorf("a warm-up interval after a measured one: %+v", iv)
			}
			warm++
		case workload.PhaseMeasure:
			measured++
		default:
			t.Errorf("interval without a phase: %+v", iv)
		}
	}
	if warm > warmIntervals || measured == 0 {
		t.Errorf("%d intervals, %d warm-up; want at most %d warm-up and some measured", len(res.Intervals), warm, warmIntervals)
	}
	if res.Metrics["transactions_per_second"] <= 0 {
		t.Errorf("metrics = %v", res.Metrics)
	}
}
