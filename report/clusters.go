package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// clusterFacts are the facts a Kubernetes run records of its cluster (docs/kubernetes.md), in
// the order the report shows them, with their labels.
var clusterFacts = []struct{ key, label string }{
	{"kubernetes_cluster", "cluster"},
	{"kubernetes_cni", "CNI"},
	{"kubernetes_kube_proxy_mode", "kube-proxy"},
	{"kubernetes_version", "Kubernetes"},
	{"kubernetes_nodes", "nodes"},
}

var _ = addSection(40, "clusters", textBuilder("clusters", "Orchestrator clusters", writeTextClusters))

// writeTextClusters prints, under each cell that ran on a Kubernetes cluster, what its runs
// recorded of that cluster: its name (the cell's cluster key), CNI, kube-proxy mode, version and
// nodes with their addresses. Each fact once when every run of the cell agrees, else every value
// with the runs that recorded it (a cluster changed under the experiment).
func writeTextClusters(w io.Writer, r *Report) {
	header := false
	byCell := map[string][]int{} // runs by cell: cells × runs would be quadratic
	for i, run := range r.Runs {
		byCell[run.CellID] = append(byCell[run.CellID], i)
	}
	for _, c := range r.Cells {
		var lines []string
		for _, f := range clusterFacts {
			var vals []string
			for _, i := range byCell[c.ID] {
				if v := r.Runs[i].Facts[f.key]; v != "" && !slices.Contains(vals, v) {
					vals = append(vals, v)
				}
			}
			if len(vals) > 0 {
				lines = append(lines, fmt.Sprintf("    %-10s %s", f.label, strings.Join(vals, " | ")))
			}
		}
		if len(lines) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\norchestrator clusters (what each cell's runs recorded of their Kubernetes cluster; values separated by | differ between runs):")
			header = true
		}
		fmt.Fprintf(w, "  %s\n%s\n", c.ID, strings.Join(lines, "\n"))
	}
}
