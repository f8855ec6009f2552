// Package sysbench runs sysbench 1.0's OLTP tests (Debian's sysbench package) as a boxbench
// workload against PostgreSQL or MariaDB. sysbench runs on the host as the client, like the
// built-in generator; its report is parsed into the same Result shape.
//
// What is measured and how it maps to a Result:
//
//   - One sysbench process runs warm-up and measured window back to back. A report checkpoint
//     (--report-checkpoints) at the end of the warm-up resets sysbench's counters, timers and
//     latency histogram, so the final report and the --histogram output cover exactly the
//     measured window, while connections, prepared statements and caches stay warm across
//     the boundary (a second process would reconnect).
//   - Ops has one operation, "transaction" (one sysbench event). Its histogram is sysbench's
//     --histogram (logarithmic buckets ~1.8 % wide, values printed in ms with 3 decimals)
//     re-recorded in an HDR histogram, each bucket's count at its value; percentiles come from
//     that histogram, the mean from sysbench's exact timer sum. Count is sysbench's
//     transaction count; the histogram may hold a few fewer values (events completing at the
//     checkpoint instant are counted after the reset but recorded before it).
//   - Intervals are sysbench's per-second reports: counts are the reported rate × interval;
//     sysbench reports one percentile per interval and no distribution, so intervals carry
//     no histogram (Hist is nil).
//   - Open loop (Rate > 0): sysbench's generator thread enqueues events at exponentially
//     distributed gaps (Poisson arrivals at the mean rate; boxbench's own generator spaces them
//     evenly) and adds each event's queue time to its latency, so latency counts from the
//     enqueue time, which is the scheduled arrival time: coordinated omission is corrected.
//     Service time alone is not measured, so only the "latency" series is stored. The queue
//     holds 131072 events; when the server cannot keep up that long sysbench aborts with
//     "The event queue is full", which is returned as an error.
//   - ClientCPU is the sysbench process's user+system time over its whole life (rusage), and
//     ClientCPUWall that life's wall-clock length: its start-up and warm-up are in both.
package sysbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/workload"
)

// Grace periods around sysbench's own time limit.
const (
	// forcedShutdown is sysbench's --forced-shutdown: how long after --time it aborts
	// transactions that are still running.
	forcedShutdown = 10 * time.Second
	// killGrace is added to warm-up + duration + forcedShutdown before the process is killed:
	// sysbench allows its threads 30 s to connect before its timer starts.
	killGrace = 35 * time.Second
)

// Workload is one configured sysbench test. It is safe for sequential use by one runner.
type Workload struct {
	cfg Config
}

var _ workload.Workload = (*Workload)(nil)

// New validates cfg and returns the workload.
func New(cfg Config) (*Workload, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sysbench config: %w", err)
	}
	return &Workload{cfg: cfg}, nil
}

// Config returns the workload's configuration.
func (w *Workload) Config() Config { return w.cfg }

// Name is "sysbench/<test>".
func (w *Workload) Name() string { return "sysbench/" + w.cfg.Test }

// Traits: sysbench is a binary on this host, so it cannot run at a client site; it says when
// its window starts only through its report, after Run.
func (w *Workload) Traits() workload.Traits { return workload.Traits{} }

// LoadKey identifies the loaded data: every OLTP test shares oltp_common's schema, so the key
// holds the family, the table count and size and the dbms.
func (w *Workload) LoadKey() string {
	c := w.cfg
	return fmt.Sprintf("sysbench/oltp/dbms=%s/tables=%d/tableSize=%d", c.DBMS.Name(), c.Tables, c.TableSize)
}

// Load runs `sysbench <test> prepare`: it creates Tables tables of TableSize rows with their
// secondary index, with up to Threads connections (sysbench prepares one table per thread).
func (w *Workload) Load(ctx context.Context, t workload.Target) error {
	bin, err := lookPath()
	if err != nil {
		return err
	}
	conn, err := w.connArgs(t)
	if err != nil {
		return err
	}
	c := w.cfg
	argv := append([]string{bin, c.Test}, conn...)
	argv = append(argv, "--tables="+strconv.Itoa(c.Tables), "--table-size="+strconv.FormatInt(c.TableSize, 10),
		"--threads="+strconv.Itoa(min(c.Threads, c.Tables)), "prepare")
	logger(t).Info("sysbench prepare", "argv", redact(strings.Join(argv, " "), t.Password))
	if _, err := command.RunWith(ctx, command.Options{Env: w.passwordEnv(t)}, argv...); err != nil {
		return errors.New(redact(fmt.Sprintf("sysbench prepare: %v", err), t.Password))
	}
	return nil
}

// Run runs the test for Warmup + Duration and parses sysbench's report. On failure it returns
// what was parsed (intervals at least) with the error.
func (w *Workload) Run(ctx context.Context, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	bin, err := lookPath()
	if err != nil {
		return nil, err
	}
	argv, err := w.runArgv(bin, t)
	if err != nil {
		return nil, err
	}
	c := w.cfg
	limit := c.Warmup + c.Duration + forcedShutdown + killGrace
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	logger(t).Info("sysbench run", "argv", redact(strings.Join(argv, " "), t.Password))
	r, runErr := runProcess(rctx, argv, w.passwordEnv(t))
	if runErr != nil && t.Password != "" {
		runErr = errors.New(redact(runErr.Error(), t.Password))
	}
	if r == nil {
		return nil, fmt.Errorf("sysbench run: %w", runErr)
	}
	if runErr != nil && rctx.Err() != nil && ctx.Err() == nil {
		runErr = fmt.Errorf("sysbench did not finish within %s, killed: %w", limit, runErr)
	}
	started := r.started
	if started.IsZero() {
		started = r.begun
	}
	out, perr := Parse(strings.NewReader(string(r.output)))
	res, rerr := c.result(out, timing{started: clk.Since(started), cpu: r.cpu, life: r.life})
	if runErr != nil {
		return res, fmt.Errorf("sysbench run: %w", runErr)
	}
	if err := errors.Join(perr, rerr); err != nil {
		return res, fmt.Errorf("sysbench run: %w (%s)", err, redact(strings.Join(argv, " "), t.Password))
	}
	return res, nil
}

// runArgv is the command line of Run.
func (w *Workload) runArgv(bin string, t workload.Target) ([]string, error) {
	conn, err := w.connArgs(t)
	if err != nil {
		return nil, err
	}
	c := w.cfg
	s := func(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }
	argv := append([]string{bin, c.Test}, conn...)
	argv = append(argv, "--tables="+strconv.Itoa(c.Tables), "--table-size="+strconv.FormatInt(c.TableSize, 10),
		"--threads="+strconv.Itoa(c.Threads), "--time="+s(c.Warmup+c.Duration),
		"--report-interval="+s(c.Interval), "--histogram=on", "--percentile=99",
		"--forced-shutdown="+s(forcedShutdown))
	if c.Warmup > 0 {
		argv = append(argv, "--report-checkpoints="+s(c.Warmup))
	}
	if c.Rate > 0 {
		argv = append(argv, "--rate="+strconv.FormatInt(int64(c.Rate), 10))
	}
	return append(argv, "run"), nil
}

// connArgs are the driver options reaching t: the endpoint, and the user and database of the
// target (the dbms's client credentials when the target leaves them empty).
func (w *Workload) connArgs(t workload.Target) ([]string, error) {
	c := w.cfg
	if t.DBMS != "" && t.DBMS != c.DBMS.Name() {
		return nil, fmt.Errorf("sysbench: configured for %s but the target is %s", c.DBMS.Name(), t.DBMS)
	}
	cred := c.DBMS.Client()
	if t.User != "" {
		cred.User = t.User
	}
	if t.Database != "" {
		cred.Database = t.Database
	}
	cred.Password = t.Password
	ep := t.Endpoint
	if ep.Unix == "" && (ep.Host == "" || ep.Port == 0) {
		return nil, fmt.Errorf("sysbench: target endpoint %q has no host and port or socket", ep.String())
	}
	var a []string
	switch c.Driver {
	case DriverPgSQL:
		a = []string{"--db-driver=pgsql", "--pgsql-user=" + cred.User, "--pgsql-db=" + cred.Database}
		if ep.Unix != "" {
			a = append(a, "--pgsql-host="+ep.Unix) // libpq takes the socket directory as host
		} else {
			a = append(a, "--pgsql-host="+ep.Host)
		}
		if ep.Port > 0 {
			a = append(a, "--pgsql-port="+strconv.Itoa(ep.Port))
		}
		// The password reaches libpq through PGPASSWORD (env), never the argv.
	case DriverMySQL:
		a = []string{"--db-driver=mysql", "--mysql-user=" + cred.User, "--mysql-db=" + cred.Database}
		if ep.Unix != "" {
			a = append(a, "--mysql-host=localhost", "--mysql-socket="+filepath.Clean(ep.Unix))
		} else {
			a = append(a, "--mysql-host="+ep.Host, "--mysql-port="+strconv.Itoa(ep.Port))
		}
		// The password reaches MariaDB Connector/C through MYSQL_PWD (env), never the argv:
		// without --mysql-password sysbench passes no password and libmariadb reads MYSQL_PWD.
	}
	return a, nil
}

func logger(t workload.Target) *slog.Logger {
	if t.Log != nil {
		return t.Log
	}
	return slog.New(slog.DiscardHandler)
}

// passwordEnv gives the client library the run's password through the environment, so that
// it is in no argv (/proc/<pid>/cmdline is readable by every local user; environ only by the
// owner and root): PGPASSWORD for libpq, MYSQL_PWD for MariaDB Connector/C.
func (w *Workload) passwordEnv(t workload.Target) []string {
	if t.Password == "" {
		return nil
	}
	if w.cfg.Driver == DriverMySQL {
		return []string{"MYSQL_PWD=" + t.Password}
	}
	return []string{"PGPASSWORD=" + t.Password}
}

// redact hides the password in s: it is in no argv, but a driver's message could echo it, and
// it must not reach a log or a stored reason.
func redact(s, password string) string {
	if password == "" {
		return s
	}
	return strings.ReplaceAll(s, password, "<redacted>")
}
