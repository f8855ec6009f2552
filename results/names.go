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
