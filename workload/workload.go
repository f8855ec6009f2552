// Package workload defines what a client does against a database in a box, and the shape of
// what it measured. Implementations: the built-in YCSB-compatible generator (workload/ycsb), and
// adapters for established tools (sysbench, fio).
package workload

import (
	"context"
	"log/slog"
	"time"

	"github.com/boxbench/boxbench/driver"
)

// Phase marks whether a measurement belongs to the warm-up (kept, but excluded from summaries)
// or to the measured window.
type Phase string

const (
	PhaseWarmup  Phase = "warmup"
	PhaseMeasure Phase = "measure"
)

// Mode says how load was offered: closed loop (workers issue back to back) or open loop (a
// target rate; latency counted from the intended start time).
type Mode string

const (
	ModeClosed Mode = "closed"
	ModeOpen   Mode = "open"
)

// Executor runs a command inside the box (the container, or the native cgroup and data
// directory) and returns its standard output. Workloads that measure the storage path (fio)
// run there; client-side workloads ignore it.
type Executor interface {
	Exec(ctx context.Context, argv []string) ([]byte, error)
}

// Target is the database under test as a workload sees it.
type Target struct {
	DBMS     string          // "postgresql", "mariadb", "redis"
	Endpoint driver.Endpoint // where the client connects
	User     string          // database user the client authenticates as
	Password string          // the run's password for User; never logged or stored
	Database string          // database/schema name (SQL databases)
	Box      Executor        // runs commands inside the box; may be nil for client-only workloads
	DataDir  string          // data directory as seen inside the box (for storage workloads)
	Log      *slog.Logger
	// Measuring, when set, is called once by a workload whose Traits say NotifiesMeasuring,
	// from its own goroutine, when its measured window starts (warm-up over); it must not block.
	Measuring func()
}

// Traits are what a workload can do beyond the contract, as data, so that the runner asks no
// workload its type: the zero value is a workload that runs in boxbench's process, lays
// nothing out ahead of its window and does not say when its window starts.
type Traits struct {
	// NotifiesMeasuring: Run calls Target.Measuring when its measured window starts. For the
	// others the start is only known after Run (Result.Warmup from the start of Run, which may
	// include connecting).
	NotifiesMeasuring bool
	// Remote: the workload can run at a client site (boxbench agent, package agent): it needs
	// nothing of this host but the endpoint, neither a binary here nor Target.Box.
	Remote bool
	// Layout, when set, creates the workload's files in the box ahead of Run (a neighbour's,
	// before the measured window, so that the window measures the load and not the layout).
	// Target carries the box and its data directory only.
	Layout func(ctx context.Context, t Target) error
}

// Clock is the run's time origin. Workload intervals and telemetry samples are offsets from
// Start, taken from the monotonic clock, so they line up.
type Clock struct {
	Start time.Time
}

// Since returns the monotonic offset of t from the run's origin.
func (c Clock) Since(t time.Time) time.Duration { return t.Sub(c.Start) }

// Workload is one configured workload.
//
// Contract: LoadKey is a pure function of the configuration. Load is called at most once per
// distinct LoadKey and dataset, against a fresh database; its data directory is then restored
// into every run's box, so Load must leave the database in the state every run starts from.
// Run is called once per run, after warm-up and measurement durations are known from the
// configuration; it must return within the configured duration plus a small grace, honour ctx
// cancellation, and report partial results with the error if it was interrupted.
type Workload interface {
	Name() string
	// LoadKey identifies the data Load produces; runs with equal keys share one loaded seed.
	LoadKey() string
	Load(ctx context.Context, t Target) error
	Run(ctx context.Context, t Target, clk Clock) (*Result, error)
	// Traits says what else this workload can do (see Traits); the runner reads nothing else.
	Traits() Traits
}

// Result is what one run measured. Latencies are nanoseconds.
type Result struct {
	Mode      Mode          `json:"mode"`
	TargetOps float64       `json:"target_ops_per_second,omitempty"` // open loop only
	Threads   int           `json:"threads"`
	Warmup    time.Duration `json:"warmup_ns"`
	Measured  time.Duration `json:"measured_ns"` // length of the measured window
	// Ops summarises each operation type over the measured window (warm-up excluded).
	Ops []OpSummary `json:"ops"`
	// Intervals are the per-interval histograms (warm-up included, marked by Phase).
	Intervals []Interval `json:"-"`
	// ClientCPU is the client's own CPU time (user+system) over ClientCPUWall, when known.
	ClientCPU time.Duration `json:"client_cpu_ns"`
	// ClientCPUWall is the wall-clock time ClientCPU was charged in, between the two instants
	// the client read its CPU time: the measured window as it really ran for the built-in
	// generator (warm-up excluded), the tool's whole life for sysbench. A share of cores is
	// ClientCPU over this, never over Measured, whose ends are nominal (ClientCores).
	ClientCPUWall time.Duration `json:"client_cpu_wall_ns,omitempty"`
	// ClientCPUs is how many cpus the client's threads may run on (its affinity, read as the
	// window opens), 0 when unknown: the client's own account, wherever it ran.
	ClientCPUs int `json:"client_cpus,omitempty"`
	// Errors counts failed operations by kind (e.g. "timeout", "not_found", "conn").
	Errors map[string]int64 `json:"errors,omitempty"`
	// Metrics are workload-specific scalar results with the unit in the name
	// (e.g. "tps_per_second", "fsync_p99_ns").
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// ClientCores is the client's CPU use in cores: ClientCPU over the wall-clock time it was
// charged in. Results stored before ClientCPUWall existed charged the warm-up too (the
// built-in generator) or the tool's whole life (sysbench), so warm-up and window are the
// divisor then. ok is false when the client's CPU is unknown.
func (r *Result) ClientCores() (cores float64, ok bool) {
	wall := r.ClientCPUWall
	if wall <= 0 {
		wall = r.Warmup + r.Measured
	}
	if r.ClientCPU <= 0 || wall <= 0 {
		return 0, false
	}
	return r.ClientCPU.Seconds() / wall.Seconds(), true
}

// Throughput is the run's headline figure: successful operations per second of the measured
// window over every operation type that is not Secondary, on the "latency" series. For a
// tool's adapter it is the tool's own figure (fio: IOPS, reads + writes + trims).
func (r *Result) Throughput() float64 {
	var t float64
	for _, o := range r.Ops {
		if o.Series == "latency" && !o.Secondary {
			t += o.Throughput
		}
	}
	return t
}

// OpSummary summarises one operation type over the measured window.
type OpSummary struct {
	Op         string  `json:"op"`     // "read", "update", "insert", "scan", "rmw", or a tool's own name
	Series     string  `json:"series"` // "latency" (from intended start) or "service" (from actual start)
	Count      int64   `json:"count"`  // successful operations
	Errors     int64   `json:"errors"`
	Throughput float64 `json:"ops_per_second"`
	// Secondary marks an operation that accompanies others and is not one of the run's own
	// operations: it is not counted in Result.Throughput (fio's fsync calls, which fio does
	// not count in its IOPS either).
	Secondary bool    `json:"secondary,omitempty"`
	P50       int64   `json:"p50_ns"`
	P90       int64   `json:"p90_ns"`
	P95       int64   `json:"p95_ns"`
	P99       int64   `json:"p99_ns"`
	P999      int64   `json:"p999_ns"`
	Max       int64   `json:"max_ns"`
	Mean      float64 `json:"mean_ns"`
	// Hist is the HDR histogram of the whole measured window, encoded with
	// hdrhistogram-go's Encode (V2 compressed), so any percentile can be recomputed and
	// histograms of several runs merged.
	Hist []byte `json:"-"`
}

// Interval is one tick of one operation type and series.
type Interval struct {
	Start  time.Duration // offset from Clock.Start
	End    time.Duration
	Phase  Phase
	Op     string
	Series string
	Count  int64
	Errors int64
	Hist   []byte // encoded HDR histogram (ns) of this interval
}
