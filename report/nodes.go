package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/boxbench/boxbench/results"
)

// nodesBuilder computes the nodes section (its place: sectionBuilders, report/section.go).
var nodesBuilder builder = textBuilder("nodes", "Nodes of each cluster", writeTextNodes)

// writeTextNodes prints, under each cell of a cluster (the runs' node_… metrics, see
// docs/topology.md), one line per node and one for the cluster's sum: mean CPU (cores), memory
// and write rate over the measured window, each with its 95 % CI and n.
func writeTextNodes(w io.Writer, r *Report) {
	header := false
	for _, c := range r.Cells {
		nodes := map[string][]string{}
		var sum []string
		for _, m := range c.Metrics {
			name, rest, ok := results.SplitNodeMetric(m.Name)
			if !ok {
				continue
			}
			v := fmtNodeValue(rest, m)
			if name == "" {
				sum = append(sum, v)
			} else {
				nodes[name] = append(nodes[name], v)
			}
		}
		if len(nodes) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nnodes (per node over the measured window: mean ± 95% CI half-width across runs; the first node is telemetry source db):")
			header = true
		}
		fmt.Fprintf(w, "  %s\n", c.ID)
		names := make([]string, 0, len(nodes))
		for n := range nodes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "    node %s  %s\n", n, strings.Join(nodes[n], ", "))
		}
		if len(sum) > 0 {
			fmt.Fprintf(w, "    all nodes  %s\n", strings.Join(sum, ", "))
		}
	}
}

func fmtNodeValue(metric string, m Metric) string {
	switch metric {
	case "cpu_cores":
		return "cpu " + fmtSummary(m.Summary, 1, " cores")
	case "memory_bytes":
		return "memory " + fmtSummary(m.Summary, 1.0/(1<<20), " MiB")
	case "io_write_bytes_per_second":
		return "writes " + fmtSummary(m.Summary, 1.0/(1<<20), " MiB/s")
	}
	return metric + " " + fmtSummary(m.Summary, 1, "")
}
