// Package check turns a run's facts into warnings that say when a number is doubtful: the load
// generator was the bottleneck, the database was throttled, the host swapped or was busy, a
// memory-bound run read from disk, limits did not take effect, too many errors, too few
// operations for a percentile. It is pure: no I/O, no clock; callers collect the facts.
package check

import (
	"fmt"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/telemetry"
)

// Severity says how much a warning undermines the run's numbers.
type Severity string

const (
	// SeverityInfo: worth knowing when reading the number; it stands as measured.
	SeverityInfo Severity = "info"
	// SeverityWarning: the number may be biased or noisy for the reason given; compare it with
	// care.
	SeverityWarning Severity = "warning"
	// SeverityError: the number does not measure what the cell says it measures (limits not
	// applied, a percentile without data); do not compare it.
	SeverityError Severity = "error"
)

// Warning is one finding about a run.
type Warning struct {
	Code     string   `json:"code"`    // stable identifier, e.g. "client_cpu_saturated"
	Message  string   `json:"message"` // the number, the threshold, and what it means
	Severity Severity `json:"severity"`
}

// Warning codes.
const (
	CodeClientCPU    = "client_cpu_saturated"
	CodeClientWaited = "client_waited_for_cpu"
	CodeThrottled    = "db_cpu_throttled"
	// CodeAtLimit is db_cpu_throttled's info form: the server ran at a CPU limit the spec set on
	// purpose and its baseline shares (rules.go, throttled).
	CodeAtLimit       = "db_cpu_at_limit"
	CodeSwap          = "swap_used"
	CodeHostBusy      = "host_busy_before_run"
	CodeMemoryBoundIO = "memory_bound_read_disk"
	CodeDiskBoundNoIO = "disk_bound_no_disk_reads"
	CodeNoIOData      = "disk_reads_unknown"
	CodeLimitsDiffer  = "limits_differ"
	CodeErrorRate     = "error_rate_high"
	CodeTooFewOps     = "too_few_ops_for_percentile"
	CodeUnaccounted   = "cpu_unaccounted"
)

// Dataset bounds.
const (
	DatasetMemory = "memory" // the data set fits in the database's memory limit
	DatasetDisk   = "disk"   // the data set is larger than the database's memory limit
)

// OpCount is one operation type's outcome over the measured window.
type OpCount struct {
	Op     string // "read", "update", ...
	Count  int64  // successful operations
	Errors int64  // failed operations
	// P99 is the operation's 99th percentile latency over the window (0 = unknown).
	P99 time.Duration
}

// Facts are what is known about one run. Zero values mean "unknown": the checks that need them
// are skipped (and say nothing).
type Facts struct {
	Ops []OpCount
	// Percentiles are the latency percentiles the report shows (e.g. 50, 99, 99.9); nil means
	// DefaultPercentiles.
	Percentiles []float64
	// Wall is the length of the measured window (warm-up excluded).
	Wall time.Duration
	// ClientCPU is the load generator's user+system CPU time over ClientCPUWall, the wall-clock
	// time it was charged in (workload.Result.ClientCores; zero means Wall). When ClientCPU is
	// zero, the "client" source's telemetry is used instead.
	ClientCPU, ClientCPUWall time.Duration
	// ClientCores is how many cores the client may use (its cpuset or quota, else the host's).
	ClientCores float64
	// Samples is the run's telemetry; DBSource names the database's source ("" means "db").
	Samples  []telemetry.Sample
	DBSource string
	// PreRun is host telemetry from a quiet period just before the run.
	PreRun []telemetry.Sample
	// WarmupEnd is where the measured window starts, as an offset from the run's Clock.Start.
	// Only samples whose whole interval lies after it count as "after warm-up".
	WarmupEnd time.Duration
	// Dataset is DatasetMemory, DatasetDisk or "" (unknown; the I/O checks are skipped).
	Dataset string
	// Spec are the limits the cell asked for, Applied those read back from the box's cgroup
	// (resource.Applied.Limits). Nil Applied skips the comparison.
	Spec    resource.Limits
	Applied *resource.Limits
	// Baseline are the limits the cell's baseline cell asks for (the cell's own for a baseline,
	// or for a cell compared with nothing); nil means unknown. A CPU limit that Spec, Applied
	// and Baseline all agree on is the experiment's design: a server throttled by it gets
	// CodeAtLimit (info), not CodeThrottled.
	Baseline *resource.Limits
	// ScansPerKey and ScansPerKeyCode are the cell's database's dbms.Traits.ScansPerKey: why
	// each keyed operation reads the whole data set, naming the server, and the code of the
	// warning the database gives it ("" when it does not, or unknown).
	ScansPerKey     string
	ScansPerKeyCode string
	// Server are the run's server_… metrics: what the database itself reported about the
	// measured window (dbms.Observer). Nil or a missing name skips the checks on it.
	Server map[string]float64
	// ServerRules are the cell's database's rules on those metrics (dbms.Traits.WindowRules),
	// applied in order to the server, or to every node of a cluster (server.go).
	ServerRules []dbms.WindowRule

	// Nodes are the nodes of a box of several (a cluster), the first included; nil for one
	// server. When set, the checks of the database's own telemetry, limits and counters
	// (throttling, the database's swap, disk reads, limits, the server_… checks) run on every
	// node, each warning naming its node, and DBSource, Applied and Server are not used.
	Nodes []Node

	// cpusetShare: Spec.Cpuset is the cluster's, of which a node has a share (nodes.go).
	cpusetShare bool
}

// Node is one node of a box of several: its telemetry source and the limits read back from
// it (nil: not compared).
type Node struct {
	Name    string // "n1", …
	Source  string // "db" for the first, "db-n2", …
	Applied *resource.Limits
	// Server are the node's server_… metrics under their plain names (Facts.Server's).
	Server map[string]float64
}

// DefaultPercentiles are the percentiles checked when Facts.Percentiles is nil.
var DefaultPercentiles = []float64{50, 90, 95, 99, 99.9}

// Thresholds tune the checks. A zero field takes its default (DefaultThresholds).
type Thresholds struct {
	ClientCPURatio  float64 // client CPU / cores available; default 0.9
	ClientWaitRatio float64 // client run-queue wait / (wait + run time); default 0.5
	// ClientWaitSeconds is the run-queue wait (seconds per second, summed over the client's
	// threads) below which no share of waiting matters; default 0.05 (50 ms per second).
	ClientWaitSeconds float64
	ThrottledRatio    float64 // throttled / runnable CFS periods; default 0.05
	SwapBytes         float64 // swap in use above this many bytes; default 16 MiB
	SwapRateBytes     float64 // swap-in or swap-out after warm-up above this many bytes/s; default 64 KiB/s
	HostBusyRatio     float64 // host CPU busy share before the run; default 0.10
	// UnaccountedShare is the share of the host's busy CPU in the measured window that other
	// tasks (attribution's other.processes) may take before cpu_unaccounted warns; default 0.10.
	UnaccountedShare     float64
	MemoryBoundReadBytes float64 // bytes/s read after warm-up in a memory-bound run; default 1 MiB/s
	DiskBoundReadBytes   float64 // a disk-bound run reading less than this (bytes/s) reads "nothing"; default 4 KiB/s
	ErrorRatio           float64 // errors / (ops + errors); default 0.01
	LimitTolerance       float64 // relative difference allowed between spec and applied; default 0.01
	// TailOps is how many operations must lie beyond a percentile for it to be more than the
	// maximum: percentile q needs TailOps / (1 - q/100) operations (p99 100, p99.9 1000 with
	// the default 1).
	TailOps float64
}

// DefaultThresholds returns the thresholds used for zero fields.
func DefaultThresholds() Thresholds {
	return Thresholds{
		ClientCPURatio:       0.9,
		ClientWaitRatio:      0.5,
		ClientWaitSeconds:    0.05,
		SwapBytes:            16 << 20,
		SwapRateBytes:        64 << 10,
		ThrottledRatio:       0.05,
		HostBusyRatio:        0.10,
		UnaccountedShare:     0.10,
		MemoryBoundReadBytes: 1 << 20,
		DiskBoundReadBytes:   4 << 10,
		ErrorRatio:           0.01,
		LimitTolerance:       0.01,
		TailOps:              1,
	}
}

func (t Thresholds) withDefaults() Thresholds {
	d := DefaultThresholds()
	or := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	or(&t.ClientCPURatio, d.ClientCPURatio)
	or(&t.ClientWaitRatio, d.ClientWaitRatio)
	or(&t.ClientWaitSeconds, d.ClientWaitSeconds)
	or(&t.SwapBytes, d.SwapBytes)
	or(&t.SwapRateBytes, d.SwapRateBytes)
	or(&t.ThrottledRatio, d.ThrottledRatio)
	or(&t.HostBusyRatio, d.HostBusyRatio)
	or(&t.UnaccountedShare, d.UnaccountedShare)
	or(&t.MemoryBoundReadBytes, d.MemoryBoundReadBytes)
	or(&t.DiskBoundReadBytes, d.DiskBoundReadBytes)
	or(&t.ErrorRatio, d.ErrorRatio)
	or(&t.LimitTolerance, d.LimitTolerance)
	or(&t.TailOps, d.TailOps)
	return t
}

// Evaluate runs every check on f and returns the warnings, in a fixed order (the order of the
// checks below). Zero fields of th take their defaults.
func Evaluate(f Facts, th Thresholds) []Warning {
	th = th.withDefaults()
	if f.DBSource == "" {
		f.DBSource = "db"
	}
	var out []Warning
	for _, c := range []func(Facts, Thresholds) []Warning{
		clientCPU, clientWaited, perNode(throttled), swap, hostBusy, perNode(datasetIO), perNode(limits),
		errorRate, tooFewOps, scanInServer, serverRules,
	} {
		out = append(out, c(f, th)...)
	}
	return out
}

// Unaccounted warns when the other tasks of the host (attribution's other.processes) took more
// than Thresholds.UnaccountedShare of the host's busy CPU in the measured window: something
// that is neither the box, its neighbours, the client nor the kernel ran beside the run, and
// its cost per operation is unexplained. busy and other are ns per operation.
func Unaccounted(busy, other float64, th Thresholds) []Warning {
	th = th.withDefaults()
	if busy <= 0 || other <= th.UnaccountedShare*busy {
		return nil
	}
	return []Warning{{Code: CodeUnaccounted, Severity: SeverityWarning,
		Message: fmt.Sprintf("%.0f%% of the host's busy CPU in the measured window was other tasks (%.1f of %.1f µs per operation; more than %.0f%%): something beside the run took CPU, and where the time goes leaves that much unexplained",
			100*other/busy, other/1e3, busy/1e3, 100*th.UnaccountedShare)}}
}
