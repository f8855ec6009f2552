package results

import "testing"

// What the runner names, the report takes apart the same way.
func TestNamesRoundTrip(t *testing.T) {
	if n, m, ok := SplitNodeMetric(NodeMetric("n2", "cpu_cores")); !ok || n != "n2" || m != "cpu_cores" {
		t.Errorf("node metric: %q %q %v", n, m, ok)
	}
	if n, m, ok := SplitNodeMetric(ClusterMetric("memory_bytes")); !ok || n != "" || m != "memory_bytes" {
		t.Errorf("cluster metric: %q %q %v", n, m, ok)
	}
	if _, _, ok := SplitNodeMetric("throughput_ops_per_second"); ok {
		t.Error("a plain metric split as a node's")
	}
	for i, want := range []bool{false, true, true} {
		if got := IsNodeSource(NodeSource(i, []string{"n1", "n2", "n13"}[i])); got != want {
			t.Errorf("node %d: IsNodeSource %v", i, got)
		}
	}
	if IsNodeSource("db-fio") || IsNodeSource("client") || IsNodeSource("db-n") {
		t.Error("a source that is no node's taken for one")
	}
	if !IsNeighbourMetric(NeighbourMetric("fio", "write_iops")) || IsNeighbourMetric("write_iops") {
		t.Error("neighbour metric")
	}
	if !IsShareMetric(ShareMetric("io", true)) || !IsShareMetric(ShareMetric("cpu", false)) || IsShareMetric("cpu_cores") {
		t.Error("share metric")
	}
}
