package results

import "strings"

// Names that carry structure: the telemetry sources of a cluster's nodes and the workload
// metrics about nodes, neighbours and shares (docs/results.md). The runner builds them and the
// report takes them apart with these functions only, so the two cannot drift apart.

// SourceDB is the telemetry source of the database's box (of a cluster's first node).
const SourceDB = "db"

// NodeSource is the telemetry source of node i (0-based) of a cluster whose nodes are named
// node: the first node is SourceDB, every other "db-<node>" ("db-n2").
func NodeSource(i int, node string) string {
	if i == 0 {
		return SourceDB
	}
	return SourceDB + "-" + node
}

// IsNodeSource says whether a telemetry source is a cluster node after the first: "db-n"
// and digits, the node names clusters are given ("n2", …).
func IsNodeSource(s string) bool {
	rest, ok := strings.CutPrefix(s, SourceDB+"-n")
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// NodeMetric names a node's figure (node_<node>_<metric>); ClusterMetric the figure summed
// over the nodes (cluster_<metric>).
func NodeMetric(node, metric string) string { return "node_" + node + "_" + metric }

// ClusterMetric names a figure summed over a cluster's nodes.
func ClusterMetric(metric string) string { return "cluster_" + metric }

// SplitNodeMetric takes a NodeMetric apart into node and metric, a ClusterMetric into "" and
// metric; ok is false for any other name. A node's name holds no '_'.
func SplitNodeMetric(name string) (node, metric string, ok bool) {
	if rest, found := strings.CutPrefix(name, "cluster_"); found {
		return "", rest, true
	}
	rest, found := strings.CutPrefix(name, "node_")
	if !found {
		return "", "", false
	}
	return strings.Cut(rest, "_")
}

// NeighbourMetric names a neighbour's own figure (neighbour_<name>_<metric>).
func NeighbourMetric(neighbour, metric string) string {
	return NeighbourPrefix + neighbour + "_" + metric
}

// NeighbourPrefix starts every NeighbourMetric (and a neighbour's facts and warning codes).
const NeighbourPrefix = "neighbour_"

// IsNeighbourMetric says whether name is a NeighbourMetric.
func IsNeighbourMetric(name string) bool { return strings.HasPrefix(name, NeighbourPrefix) }

// ShareMetric names the share of resource ("io", "cpu") the weights configured for the
// database, or (obtained) the share it obtained beside its neighbours.
func ShareMetric(resource string, obtained bool) string {
	if obtained {
		return resource + "_share_obtained_ratio"
	}
	return resource + "_share_configured_ratio"
}

// IsShareMetric says whether name is a ShareMetric.
func IsShareMetric(name string) bool { return strings.Contains(name, "_share_") }

// The measured window's metrics: the runner stores them in a run's result (runner/steady.go,
// runner/quiet.go) and the report reads them by these names.
const (
	// MetricTruncated is the steady-state cut, seconds from the window's start.
	MetricTruncated = "steady_state_truncated_seconds"
	// MetricUntruncated is the run's throughput before the steady-state cut (ops/s).
	MetricUntruncated = "throughput_untruncated_ops_per_second"
	// MetricQuietWait is how long the run waited for a quiet host (seconds).
	MetricQuietWait = "quiet_start_wait_seconds"
)

// Where the time goes (docs/results.md): the runner accounts the host's busy CPU of a run's
// measured window to the components that did the work, per operation, and stores each as a
// metric of the run's result; the report takes them apart with SplitCPUPerOp and SplitPerOp.
//
// A component is a group and a name, both of [a-z0-9-]:
//
//   - database: user, system — the box's own control group (less what a box part inside it
//     did: gVisor's Sentry and Gofer);
//   - box: the box's machinery, found from the box (containerd-shim, docker-proxy,
//     runsc-sentry, runsc-gofer, lxc-monitor, qemu-vcpu, qemu-io …);
//   - neighbour: each neighbour's control group, by its name;
//   - client: generator — the workload's client;
//   - kernel: ksoftirqd, kworker, jbd2 (the data device's journal thread), kthreads (every
//     other kernel thread), interrupts (busy CPU no task was charged for);
//   - other: processes — every other task on the host;
//   - host: busy — the host's busy CPU itself, the total the components add up to.
const (
	cpuPerOpPrefix = "cpu_ns_per_op."
	perOpPrefix    = "per_op."
)

// The groups of CPUPerOp, in the order a report lists them.
const (
	GroupDatabase  = "database"
	GroupBox       = "box"
	GroupNeighbour = "neighbour"
	GroupClient    = "client"
	GroupKernel    = "kernel"
	GroupOther     = "other"
	GroupHost      = "host"
)

// CPUPerOp names a component's CPU time per operation in nanoseconds
// (cpu_ns_per_op.<group>.<name>).
func CPUPerOp(group, name string) string { return cpuPerOpPrefix + group + "." + name }

// SplitCPUPerOp takes a CPUPerOp name apart; ok is false for any other name.
func SplitCPUPerOp(metric string) (group, name string, ok bool) {
	rest, found := strings.CutPrefix(metric, cpuPerOpPrefix)
	if !found {
		return "", "", false
	}
	group, name, ok = strings.Cut(rest, ".")
	return group, name, ok && group != "" && name != ""
}

// PerOp names another cost per operation of the run's database box (per_op.<what>, the unit in
// what: io_read_bytes, io_write_ops, journal_commits, context_switches_voluntary, throttled_ns,
// minor_faults …), or a kernel event count per operation (per_op.softirq_net_rx …).
func PerOp(what string) string { return perOpPrefix + what }

// SplitPerOp takes a PerOp name apart; ok is false for any other name.
func SplitPerOp(metric string) (what string, ok bool) {
	what, ok = strings.CutPrefix(metric, perOpPrefix)
	return what, ok && what != ""
}

// The facts a run's accounting records beside its metrics.
const (
	// FactNotAccounted lists the components the run could not measure, each "component: why"
	// joined by "; " (a pod on another node, a kernel without per-task CPU in /proc). A
	// component listed here has no metric: it is never a zero.
	FactNotAccounted = "where_not_measured"
	// FactInterrupts says what kernel.interrupts holds on the run's kernel: "all" where the
	// kernel accounts interrupt time apart from tasks (CONFIG_IRQ_TIME_ACCOUNTING), "idle"
	// where a task is charged for the interrupts that arrive while it runs (tick-based
	// accounting) so that only interrupts in idle are left, "unknown" when the kernel's
	// configuration cannot be read.
	FactInterrupts = "where_interrupts"
)
