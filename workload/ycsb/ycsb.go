// Package ycsb is boxbench's built-in YCSB-compatible load generator.
//
// It follows YCSB's CoreWorkload: the same operations, mixes, key names (user<n>, FNV-64
// hashed), generators (scrambled zipfian with constant 0.99, latest over the acknowledged
// insert counter, hotspot, uniform) and data model, so its results compare with YCSB's. It
// differs in how it measures: one HDR histogram recorder per worker with no lock on the hot
// path, merged every interval and stored; a target rate is an open loop whose latency counts
// from each operation's intended start (coordinated omission corrected), with service time
// kept as a second series; warm-up is marked, not dropped. Its cost is in docs/performance.md;
// where it deviates from YCSB is said where it happens (Config, gen.go, the drivers).
package ycsb

import (
	"context"
	"errors"
	"fmt"
	"github.com/boxbench/boxbench/internal/placement"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/recovery"
	"github.com/boxbench/boxbench/workload"
)

// Opener opens a driver; driver/postgres.New, driver/mysql.New, driver/redis.New and
// driver/noop.New are Openers.
type Opener func(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int) (driver.DB, error)

// TableUser is implemented by drivers whose table name is not fixed: Run calls UseTable
// because Setup (which names the table) ran in the load, maybe in another process.
type TableUser interface{ UseTable(driver.Table) }

// stopGrace is how long Run waits for operations in flight at the end of the window before it
// closes the connections under them.
const stopGrace = 2 * time.Second

// Workload is a configured YCSB workload. Load and Run may be called from one goroutine at a
// time.
type Workload struct {
	cfg     resolved
	drivers map[string]Opener
}

var _ workload.Workload = (*Workload)(nil)

// New validates cfg (every problem at once) and returns the workload; drivers maps a
// Target.DBMS name to its driver.
func New(cfg Config, drivers map[string]Opener) (*Workload, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ycsb config: %w", err)
	}
	return &Workload{cfg: cfg.resolve(), drivers: drivers}, nil
}

// Config returns the configuration with the mix's defaults filled in.
func (w *Workload) Config() Config {
	c := w.cfg.Config
	c.RequestDistribution, c.ScanLength, c.LoadThreads = w.cfg.distribution, w.cfg.scanLength, w.cfg.loadThreads
	return c
}

// Name is "ycsb/<mix>" ("ycsb/custom" for custom proportions).
func (w *Workload) Name() string {
	if w.cfg.Mix == "" {
		return "ycsb/custom"
	}
	return "ycsb/" + w.cfg.Mix
}

// LoadKey identifies the loaded data: everything that shapes the records.
func (w *Workload) LoadKey() string {
	c := w.cfg
	return fmt.Sprintf("ycsb/table=%s/records=%d/fields=%d/length=%d/order=%s/padding=%d/seed=%d",
		c.Table, c.RecordCount, c.FieldCount, c.FieldLength, c.KeyOrder, c.ZeroPadding, c.Seed)
}

func (w *Workload) open(ctx context.Context, t workload.Target, pool int) (driver.DB, error) {
	o, ok := w.drivers[t.DBMS]
	if !ok {
		return nil, fmt.Errorf("ycsb: no driver for dbms %q (have %v)", t.DBMS, sortedKeys(w.drivers))
	}
	db, err := o(ctx, t.Endpoint, driver.Credentials{User: t.User, Password: t.Password, Database: t.Database}, pool)
	if err != nil {
		return nil, fmt.Errorf("ycsb: open %s at %s: %w", t.DBMS, t.Endpoint, err)
	}
	return db, nil
}

func (w *Workload) table() driver.Table {
	return driver.Table{Name: w.cfg.Table, FieldCount: w.cfg.FieldCount}
}

// Load creates the table and inserts RecordCount records, key numbers 0..RecordCount-1 in
// order (YCSB's insert order; the key names are hashed unless KeyOrder is ordered), with
// LoadThreads workers each inserting LoadBatch records per round trip.
func (w *Workload) Load(ctx context.Context, t workload.Target) error {
	c := w.cfg
	db, err := w.open(ctx, t, c.loadThreads)
	if err != nil {
		return err
	}
	defer db.Close()
	tbl := w.table()
	if err := db.Setup(ctx, tbl); err != nil {
		return fmt.Errorf("ycsb load: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	errs := make(chan error, c.loadThreads)
	var wg sync.WaitGroup
	for i := 0; i < c.loadThreads; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			err := recovery.Call(fmt.Sprintf("ycsb load worker %d", id), func() error {
				return w.loadWorker(ctx, db, tbl.Fields(), id, &next)
			})
			if err != nil {
				errs <- err
				cancel()
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("ycsb load: %w", err)
	}
	return ctx.Err()
}

func (w *Workload) loadWorker(ctx context.Context, db driver.DB, fields []string, id int, next *atomic.Int64) error {
	c := w.cfg
	sh := &shared{cfg: c, hashed: c.KeyOrder == "hashed"}
	wk := newWorker(sh, -1-id, nil, nil, 0) // negative ids: seeds apart from the run's workers
	batch := int64(c.LoadBatch)
	keys := make([]string, 0, batch)
	vals := make([][][]byte, 0, batch)
	for ctx.Err() == nil {
		lo := next.Add(batch) - batch
		if lo >= c.RecordCount {
			return nil
		}
		hi := min(lo+batch, c.RecordCount)
		keys, vals = keys[:0], vals[:0]
		for n := lo; n < hi; n++ {
			keys = append(keys, string(appendKey(nil, n, sh.hashed, c.ZeroPadding)))
			row := make([][]byte, len(fields))
			copy(row, wk.values(len(fields)))
			vals = append(vals, row)
		}
		if err := w.insertBatch(ctx, db, keys, fields, vals); err != nil {
			return fmt.Errorf("insert records %d..%d: %w", lo, hi-1, err)
		}
	}
	return ctx.Err()
}

// minRequestLimit is the least time one load request may take before it counts as stalled.
const minRequestLimit = 2 * time.Minute

// requestLimit bounds one request of the load: the run's window (warm-up and measured time),
// at least minRequestLimit. A request that outlasts the window it loads data for is stalled,
// not slow (a member that stopped answering, a lost reply); without the bound the load would
// wait for timeouts.load, an hour by default.
func (w *Workload) requestLimit() time.Duration {
	return max(w.cfg.Warmup+w.cfg.Duration, minRequestLimit)
}

// insertBatch inserts one batch within requestLimit; a request that does not finish in it
// fails the load with an error that says it stalled.
func (w *Workload) insertBatch(ctx context.Context, db driver.DB, keys, fields []string, vals [][][]byte) error {
	limit := w.requestLimit()
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var err error
	for attempt := 1; ; attempt++ {
		if len(keys) == 1 {
			err = db.Insert(rctx, keys[0], fields, vals[0])
		} else {
			err = db.BatchInsert(rctx, keys, fields, vals)
		}
		if err == nil || !driver.IsRetryableWrite(err) || rctx.Err() != nil {
			break
		}
		if attempt == loadAttempts {
			return fmt.Errorf("%w (the database's answer to %d attempts, %s apart at first)", err, attempt, loadBackoff)
		}
		select {
		case <-rctx.Done():
		case <-time.After(loadBackoff << (attempt - 1)):
			continue
		}
		break // the request's time ran out while it waited: no attempt with a dead context
	}
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		return fmt.Errorf("the request stalled: no reply within %s (the run's window, at least %s): %w", limit, minRequestLimit, err)
	}
	return err
}

// A load write the database answered with a retryable error (driver.RetryableWrite: a
// Cassandra coordinator whose replicas did not answer within its write timeout, on a host busy
// with a just-started JVM) is sent again, up to loadAttempts times in all, after loadBackoff,
// then twice that, and so on: the load only has to put the records in, and one slow write
// failed whole runs (e2e, 2026-11-27 23:51, both cells).
const (
	loadAttempts = 5
	loadBackoff  = 500 * time.Millisecond
)

// Run drives the workload for Warmup + Duration (or until OperationCount measured operations)
// and returns what it measured. On cancellation it returns the partial result with the error.
//
// Operations get a context that is not cancelled (cancellable contexts cost the drivers a
// watcher per operation); at the end, operations still in flight after a short grace are
// stopped by closing the driver's connections.
//
// Run sets GOMAXPROCS for its duration as Config.ClientProcs says (by default it starts with
// one P and adds Ps while the client is busy) and restores it before it returns.
func (w *Workload) Run(ctx context.Context, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	c := w.cfg
	db, err := w.open(ctx, t, c.Threads)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if tu, ok := db.(TableUser); ok {
		tu.UseTable(w.table())
	}
	return w.run(ctx, db, clk, t.Measuring)
}

// Traits: Run calls Target.Measuring when warm-up ends, and the generator is boxbench's own
// code, so it runs at a client site as well as here.
func (w *Workload) Traits() workload.Traits {
	return workload.Traits{NotifiesMeasuring: true, Remote: true}
}

// run is Run on an open driver.
// measuring (may be nil) is called when the measured window starts.
func (w *Workload) run(ctx context.Context, db driver.DB, clk workload.Clock, measuring func()) (*workload.Result, error) {
	c := w.cfg
	sh, recs, workers := w.prepare(db)
	open := sh.periodNs > 0
	col := newCollector(recs, open, c.props, 0)

	cpus := len(placement.OwnCPUs()) // its affinity (placement.Pin and taskset set every thread's alike)
	cpu0 := cpuTime()
	sh.origin = time.Now()
	pr := startProcs(c.ClientProcs, cpu0, sh.origin)
	defer pr.stop()
	base := sh.origin.Sub(clk.Start) // offset of the origin from the run's clock
	col.start = base
	sh.warmupEnd = int64(c.Warmup)
	var wg sync.WaitGroup
	var running atomic.Int64
	running.Store(int64(len(workers)))
	allDone := make(chan struct{})
	var panicMu sync.Mutex
	var panicErr error // the first worker's panic: it ends the run for every worker
	for i, wk := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := recovery.Call(fmt.Sprintf("ycsb worker %d", i), func() error { wk.run(); return nil })
			if err != nil {
				panicMu.Lock()
				if panicErr == nil {
					panicErr = err
				}
				panicMu.Unlock()
				sh.stop.Store(true)
			}
			if running.Add(-1) == 0 {
				close(allDone)
			}
		}()
	}

	// Interval boundaries: every Interval from the origin, with one at the end of warm-up so
	// that no interval straddles it.
	end := time.Duration(-1)
	if c.Duration > 0 {
		end = c.Warmup + c.Duration
	}
	phase := workload.PhaseWarmup
	if c.Warmup == 0 {
		phase = workload.PhaseMeasure
	}
	// The client's CPU time and the wall clock are read together as the window opens and
	// closes, so that the CPU is divided by the time it was charged in (workload.Result).
	var cpuMeasure0 time.Duration
	var wallMeasure0 time.Time
	if phase == workload.PhaseMeasure {
		cpuMeasure0, wallMeasure0 = cpu0, sh.origin
		if measuring != nil {
			measuring()
		}
	}
	measureStart := c.Warmup
	next := c.Interval
	if c.Warmup > 0 {
		next = min(c.Interval, c.Warmup)
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	var runErr error
	var stopAt time.Duration
loop:
	for {
		target := next
		if end >= 0 && end < target {
			target = end
		}
		timer.Reset(time.Until(sh.origin.Add(target)))
		select {
		case <-ctx.Done():
			runErr = ctx.Err()
			stopAt = time.Since(sh.origin)
			break loop
		case <-allDone:
			stopAt = time.Since(sh.origin)
			break loop
		case <-timer.C:
		}
		if target == end {
			stopAt = end
			break loop
		}
		col.tick(base+time.Since(sh.origin), phase)
		pr.adapt(cpuTime(), time.Now())
		if phase == workload.PhaseWarmup && target >= c.Warmup {
			phase = workload.PhaseMeasure
			cpuMeasure0, wallMeasure0 = cpuTime(), time.Now()
			next = c.Warmup + c.Interval
			if measuring != nil {
				measuring()
			}
		} else {
			next += c.Interval
			if phase == workload.PhaseWarmup && next > c.Warmup {
				next = c.Warmup
			}
		}
	}
	sh.stop.Store(true)
	cpuEnd, wallEnd := cpuTime(), time.Now()
	// Wait for operations in flight, then break the connections of those still stuck.
	select {
	case <-allDone:
	case <-time.After(stopGrace):
		db.Close()
		<-allDone
	}
	wg.Wait()
	clientProcs := pr.stop()
	col.tick(base+stopAt, phase)
	if phase == workload.PhaseWarmup {
		measureStart = stopAt // the run ended during warm-up: nothing was measured
	}
	measured := max(stopAt-measureStart, 0)

	res := &workload.Result{Mode: workload.ModeClosed, Threads: c.Threads, Warmup: min(c.Warmup, stopAt),
		Measured: measured, Intervals: col.ivs, ClientCPU: cpuEnd - cpu0, ClientCPUWall: wallEnd.Sub(sh.origin),
		ClientCPUs: cpus, Errors: col.errorCounts(), Metrics: map[string]float64{}}
	if !wallMeasure0.IsZero() { // the window opened: its CPU, not the warm-up's
		res.ClientCPU, res.ClientCPUWall = cpuEnd-cpuMeasure0, wallEnd.Sub(wallMeasure0)
	}
	if open {
		res.Mode, res.TargetOps = workload.ModeOpen, c.TargetRate
	}
	res.Ops = col.summaries(measured)
	var ops int64
	for _, s := range res.Ops {
		if s.Series == "latency" {
			ops += s.Count + s.Errors
		}
	}
	res.Metrics["operations_total"] = float64(ops)
	res.Metrics["client_gomaxprocs"] = float64(clientProcs)
	if measured > 0 {
		res.Metrics["throughput_ops_per_second"] = float64(ops) / measured.Seconds()
	}
	if !wallMeasure0.IsZero() {
		cpuM := res.ClientCPU
		res.Metrics["client_cpu_measured_seconds"] = cpuM.Seconds()
		if ops > 0 {
			res.Metrics["client_cpu_per_op_ns"] = float64(cpuM.Nanoseconds()) / float64(ops)
		}
	}
	if col.clamp > 0 {
		res.Metrics["clamped_values_total"] = float64(col.clamp)
	}
	return res, errors.Join(runErr, panicErr, col.encErr)
}

// prepare builds the shared state, the recorders and the workers.
func (w *Workload) prepare(db driver.DB) (*shared, []*recorder, []*worker) {
	c := w.cfg
	sh := &shared{cfg: c, db: db, ctx: context.WithoutCancel(context.Background()),
		insertKeys: newAckCounter(c.RecordCount), allFields: w.table().Fields(),
		hashed: c.KeyOrder == "hashed"}
	for i := range sh.allFields {
		sh.oneField = append(sh.oneField, sh.allFields[i:i+1])
	}
	if c.TargetRate > 0 {
		sh.periodNs = 1e9 * float64(c.Threads) / c.TargetRate
	}
	// The zeta sums are the costly part of building a zipfian generator: compute them once.
	var latestZeta float64
	if c.distribution == "latest" {
		latestZeta = zeta(sh.insertKeys.last(), c.ZipfianConstant)
	}
	var recs []*recorder
	var workers []*worker
	for i := 0; i < c.Threads; i++ {
		var keys intGen
		switch c.distribution {
		case "uniform":
			keys = newUniform(0, c.RecordCount-1)
		case "zipfian":
			// CoreWorkload widens the key space by the inserts it expects, with a fudge factor
			// of 2; operationcount is 0 in a run limited by time, as in YCSB.
			expected := int64(float64(c.OperationCount) * c.props[opInsert] * 2)
			keys = newScrambledZipfian(0, c.RecordCount+expected, c.ZipfianConstant)
		case "latest":
			keys = newLatest(sh.insertKeys, c.ZipfianConstant, latestZeta)
		case "hotspot":
			keys = newHotspot(0, c.RecordCount-1, c.HotspotDataFraction, c.HotspotOpnFraction)
		}
		rec := newRecorder(c.TargetRate > 0, c.props)
		quota := int64(0)
		if c.OperationCount > 0 { // YCSB's split: the first threads take the remainder
			quota = c.OperationCount / int64(c.Threads)
			if int64(i) < c.OperationCount%int64(c.Threads) {
				quota++
			}
			if quota == 0 {
				continue
			}
		}
		recs = append(recs, rec)
		workers = append(workers, newWorker(sh, i, keys, rec, quota))
	}
	return sh, recs, workers
}

// cpuTime is the process's user+system CPU time (getrusage RUSAGE_SELF): the generator, its
// drivers and the collector, and anything else the process runs.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
