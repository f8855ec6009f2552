package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/results"
)

// clustersBuilder computes the clusters section (its place: sectionBuilders, report/section.go).
var clustersBuilder builder = textBuilder("clusters", "Orchestrator clusters", writeTextClusters)

// writeTextClusters prints, under each cell whose runs ran on an orchestrator's cluster, what
// they recorded of it (results.RunRow's Orchestrator): each fact with its label, in the order
// the runs list them. Each fact once when every run of the cell agrees, else every value
// with the runs that recorded it (a cluster changed under the experiment).
func writeTextClusters(w io.Writer, r *Report) {
	var names []string           // the orchestrators' names, for the heading
	byCell := map[string][]int{} // runs by cell: cells × runs would be quadratic
	for i, run := range r.Runs {
		byCell[run.CellID] = append(byCell[run.CellID], i)
	}
	var blocks []string
	for _, c := range r.Cells {
		var orchs []results.Orchestrator
		for _, i := range byCell[c.ID] {
			orchs = append(orchs, r.Runs[i].Orchestrator)
		}
		lines := clusterLines(orchs)
		if len(lines) == 0 {
			continue
		}
		for _, o := range orchs {
			if o.Name != "" && !slices.Contains(names, o.Name) {
				names = append(names, o.Name)
			}
		}
		blocks = append(blocks, fmt.Sprintf("  %s\n%s\n", c.ID, strings.Join(lines, "\n")))
	}
	if len(blocks) == 0 {
		return
	}
	their := "their" // "their Kubernetes cluster"
	if len(names) > 0 {
		their += " " + strings.Join(names, " or ")
	}
	fmt.Fprintf(w, "\norchestrator clusters (what each cell's runs recorded of %s cluster; values separated by | differ between runs):\n", their)
	for _, b := range blocks {
		io.WriteString(w, b)
	}
}

// clusterLines are a cell's lines: every fact its runs recorded a value of, by label, in the
// runs' order (a fact a run lists and no earlier one does follows the fact it follows in that
// run, or comes last), with the distinct values in the order of the runs.
func clusterLines(orchs []results.Orchestrator) []string {
	var keys []string
	label := map[string]string{}
	vals := map[string][]string{}
	for _, o := range orchs {
		at := len(keys) // where a new key goes: after this run's previous fact, else last
		for _, f := range o.Facts {
			if i := slices.Index(keys, f.Key); i >= 0 {
				at = i + 1
			} else {
				keys = slices.Insert(keys, at, f.Key)
				label[f.Key] = f.Label
				at++
			}
			if f.Value != "" && !slices.Contains(vals[f.Key], f.Value) {
				vals[f.Key] = append(vals[f.Key], f.Value)
			}
		}
	}
	var lines []string
	for _, k := range keys {
		if len(vals[k]) > 0 {
			lines = append(lines, fmt.Sprintf("    %-10s %s", label[k], strings.Join(vals[k], " | ")))
		}
	}
	return lines
}
