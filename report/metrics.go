package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

var metricsTmpl = sectionTemplate("metrics")

// metricsSection shows the workload's own figures: in the terminal the adaptive repetitions,
// the shares beside a neighbour, the CPU per operation and the neighbours' figures (the rest
// would bury the table); in the page every metric and share but those "Where the time goes"
// shows (isWhereMetric). Its JSON is per cell (cells[].metrics), not a key of its own. Its
// model is the terminal text and the page's rows, made once from the cells' metrics.
type metricsSection struct {
	text  string
	views []metricView
}

// metricsBuilder computes the metrics section (its place: sectionBuilders, report/section.go).
var metricsBuilder builder = func(r *Report) (Section, error) {
	var b strings.Builder
	writeTextMetrics(&b, r)
	return metricsSection{b.String(), r.metricViews()}, nil
}

func (metricsSection) Head() Head {
	return Head{Anchor: "metrics", Title: "Workload metrics and shares"}
}
func (s metricsSection) Text(w io.Writer)  { io.WriteString(w, s.text) }
func (metricsSection) JSON() (string, any) { return "", nil }
func (metricsSection) CSV() []CSVForm      { return nil }
func (s metricsSection) HTML() (template.HTML, error) {
	if len(s.views) == 0 {
		return "", nil
	}
	return renderHTML(metricsTmpl, struct{ Metrics []metricView }{s.views})
}

// Metric is one workload-specific figure of a cell (fio IOPS, sysbench tps, configured and
// obtained shares next to a neighbour …) over the cell's ok runs. The unit is in the name.
type Metric struct {
	Name    string
	Summary stats.Summary
}

// runMetrics are the metrics each ok run's result carries, decoded once, in the order of ok;
// nil for a run whose result is absent or does not decode.
func runMetrics(ok []results.RunRow) []map[string]float64 {
	out := make([]map[string]float64, len(ok))
	for i, run := range ok {
		var res struct {
			Metrics map[string]float64 `json:"metrics"`
		}
		if len(run.Result) > 0 && json.Unmarshal(run.Result, &res) == nil {
			out[i] = res.Metrics
		}
	}
	return out
}

// cellMetrics summarises every metric the ok runs' results carry (runMetrics), by name.
func cellMetrics(metrics []map[string]float64) []Metric {
	byName := map[string][]float64{}
	for _, m := range metrics {
		for k, v := range m {
			byName[k] = append(byName[k], v)
		}
	}
	var out []Metric
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range byName {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, Metric{Name: k, Summary: stats.Summarize(byName[k])})
	}
	return out
}

// shareRow is one cell's configured-versus-obtained share of one resource.
type shareRow struct {
	Cell, Resource       string
	Configured, Obtained stats.Summary
}

func (r *Report) shareRows() []shareRow {
	var rows []shareRow
	for _, c := range r.Cells {
		get := func(name string) (stats.Summary, bool) {
			for _, m := range c.Metrics {
				if m.Name == name {
					return m.Summary, true
				}
			}
			return stats.Summary{}, false
		}
		for _, res := range []string{"io", "cpu"} {
			conf, ok := get(results.ShareMetric(res, false))
			if !ok {
				continue
			}
			obt, _ := get(results.ShareMetric(res, true))
			rows = append(rows, shareRow{Cell: c.ID, Resource: res, Configured: conf, Obtained: obt})
		}
	}
	return rows
}

// fmtSummary renders mean ± CI half-width (n), or the lone value, or "absent".
func fmtSummary(s stats.Summary, scale float64, unit string) string {
	switch {
	case s.N == 0:
		return "absent"
	case !s.CI95.Valid:
		return fmt.Sprintf("%.4g%s (n=%d)", s.Mean*scale, unit, s.N)
	}
	return fmt.Sprintf("%.4g%s ± %.2g (95%% CI, n=%d)", s.Mean*scale, unit, s.CI95.HalfWidth()*scale, s.N)
}

// adaptiveEvents are the decisions of adaptive repetitions, for every view of the report.
func (r *Report) adaptiveEvents() []string {
	var out []string
	for _, e := range r.Events {
		if e.Kind == "adaptive" {
			out = append(out, e.Message)
		}
	}
	return out
}

// writeTextMetrics prints the shares section and the neighbours' own figures after the table.
// The other workload metrics (fio's and sysbench's own percentiles, counters) are in the JSON
// and HTML reports; in a terminal they would bury the table.
func writeTextMetrics(w io.Writer, r *Report) {
	if ev := r.adaptiveEvents(); len(ev) > 0 {
		fmt.Fprintln(w, "\nadaptive repetitions:")
		for _, e := range ev {
			fmt.Fprintln(w, "  "+e)
		}
	}
	if rows := r.shareRows(); len(rows) > 0 {
		fmt.Fprintln(w, "\nshares: what the weights configured vs what the database obtained over the measured window")
		for _, s := range rows {
			fmt.Fprintf(w, "  %s  %s: configured %s, obtained %s\n", s.Cell, s.Resource,
				fmtSummary(s.Configured, 100, "%"), fmtSummary(s.Obtained, 100, "%"))
		}
	}
	writeCPUPerOp(w, r)
	any := false
	for _, c := range r.Cells {
		var parts []string
		for _, m := range c.Metrics {
			if !results.IsShareMetric(m.Name) && results.IsNeighbourMetric(m.Name) {
				parts = append(parts, m.Name+" "+fmtSummary(m.Summary, 1, ""))
			}
		}
		if len(parts) == 0 {
			continue
		}
		if !any {
			fmt.Fprintln(w, "\nneighbours (unit in the name; mean ± 95% CI half-width; every workload metric is in --format json and --html):")
			any = true
		}
		fmt.Fprintf(w, "  %s\n    %s\n", c.ID, strings.Join(parts, "\n    "))
	}
}

type jsonMetric struct {
	Mean float64     `json:"mean"`
	CI95 *[2]float64 `json:"ci95"`
	N    int         `json:"n"`
}

func metricsJSON(ms []Metric) map[string]jsonMetric {
	if len(ms) == 0 {
		return nil
	}
	out := map[string]jsonMetric{}
	for _, m := range ms {
		out[m.Name] = jsonMetric{Mean: m.Summary.Mean, CI95: format.Interval(m.Summary.CI95), N: m.Summary.N}
	}
	return out
}

// metricView is one row of the HTML metrics table.
type metricView struct{ Cell, Name, Value string }

func (r *Report) metricViews() []metricView {
	var out []metricView
	for _, s := range r.shareRows() {
		out = append(out, metricView{s.Cell, s.Resource + " share: configured → obtained",
			fmtSummary(s.Configured, 100, " %") + " → " + fmtSummary(s.Obtained, 100, " %")})
	}
	for _, c := range r.Cells {
		for _, m := range c.Metrics {
			if !results.IsShareMetric(m.Name) && !isWhereMetric(m.Name) {
				out = append(out, metricView{c.ID, m.Name, fmtSummary(m.Summary, 1, "")})
			}
		}
	}
	return out
}

// isWhereMetric says whether a metric is one of "Where the time goes" (a component's CPU per
// operation, another cost per operation): that section shows them, so the page's list of
// metrics leaves them out.
func isWhereMetric(name string) bool {
	if _, _, ok := results.SplitCPUPerOp(name); ok {
		return true
	}
	_, ok := results.SplitPerOp(name)
	return ok
}

// cpuPerOp are the per-operation CPU metrics shown in the terminal: the host's soft
// interrupts (where virtual networks spend what they cost, outside the box's cgroup) and the
// client's own CPU.
var cpuPerOp = []struct{ metric, label string }{
	{"host_softirq_cpu_per_op_ns", "host softirq"},
	{"client_cpu_per_op_ns", "client"},
}

// writeCPUPerOp prints, per cell that has it, the host's softirq CPU per operation beside the
// client's — for the cells whose runs predate where the time goes, which shows both.
func writeCPUPerOp(w io.Writer, r *Report) {
	any := false
	busy := results.CPUPerOp(results.GroupHost, "busy")
	for _, c := range r.Cells {
		if slices.ContainsFunc(c.Metrics, func(m Metric) bool { return m.Name == busy }) {
			continue // where the time goes has them
		}
		var parts []string
		for _, k := range cpuPerOp {
			for _, m := range c.Metrics {
				if m.Name == k.metric {
					parts = append(parts, k.label+" "+fmtSummary(m.Summary, 1e-3, " µs"))
				}
			}
		}
		if len(parts) == 0 || !strings.HasPrefix(parts[0], cpuPerOp[0].label) {
			continue
		}
		if !any {
			fmt.Fprintln(w, "\nCPU time per operation (mean ± 95% CI half-width over runs):")
			any = true
		}
		fmt.Fprintf(w, "  %s  %s\n", c.ID, strings.Join(parts, ", "))
	}
}
