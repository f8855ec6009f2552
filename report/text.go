package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/report/format"
)

// format.Cols is the width the terminal table is laid out for.

// WriteText writes the terminal table: per cell n, throughput mean ± CI, overhead versus the
// baseline with its CI and verdict, p99 per op type and warning markers, grouped by baseline,
// then the warnings as footnotes and the skipped cells.
func WriteText(w io.Writer, r *Report) error {
	sections, err := r.sections()
	if err != nil {
		return err
	}
	tw := format.Terminal(w) // strings from results files reach a terminal escaped
	bw := bufio.NewWriter(tw)
	writeTextHeader(bw, r)
	cols := r.columnKeys()
	notes := r.footnotes()

	head := []string{}
	for _, k := range cols {
		head = append(head, strings.ToUpper(k))
	}
	head = append(head, "N", "THROUGHPUT ops/s", "OVERHEAD % (95% CI)", "VERDICT")
	for _, op := range r.Ops {
		head = append(head, "p99 "+op)
	}
	head = append(head, "")
	right := map[int]bool{len(cols): true, len(cols) + 1: true}
	for i := range r.Ops {
		right[len(cols)+4+i] = true
	}
	var rows [][]string
	var titles []string // titles[i] is printed before rows[i] when not empty
	for _, g := range r.Groups {
		first := true
		for _, c := range g.Cells {
			row := textRow(r, c, cols, notes)
			title := ""
			if first {
				title = r.groupTitle(g, cols)
				first = false
			}
			rows = append(rows, row)
			titles = append(titles, title)
		}
	}
	widths := make([]int, len(head))
	for _, row := range append([][]string{head}, rows...) {
		for i, s := range row {
			widths[i] = max(widths[i], format.Width(s))
		}
	}
	line := func(row []string) {
		var b strings.Builder
		b.WriteString("  ")
		for i, s := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(format.Pad(s, widths[i], right[i]))
		}
		fmt.Fprintln(bw, strings.TrimRight(b.String(), " "))
	}
	if len(rows) > 0 {
		line(head)
	}
	for i, row := range rows {
		if titles[i] != "" {
			fmt.Fprintln(bw, titles[i])
		}
		line(row)
	}
	if len(rows) == 0 {
		fmt.Fprintln(bw, "no runnable cells")
	}
	for _, s := range sections {
		s.Text(bw)
	}
	writeTextNotes(bw, r, notes)
	if err := bw.Flush(); err != nil {
		return err
	}
	return tw.Flush()
}

func writeTextHeader(w io.Writer, r *Report) {
	e := r.Experiment
	name := e.Name
	if name == "" {
		name = "experiment"
	}
	fmt.Fprintf(w, "%s — %s, %s, boxbench %s\n", name, format.OrDash(e.ID), format.OrDash(e.CreatedAt), format.OrDash(e.Version))
	if h := hostLine(r.Env); h != "" {
		format.Wrap(w, "host: ", h, format.Cols)
	}
	if d := r.Env["dbms_package"]; d != "" {
		format.Wrap(w, "dbms: ", d, format.Cols)
	}
	how := "with the 95 % Fieller CI; verdict from Mann–Whitney and the CI at α = 0.05"
	also := " JSON and HTML add the comparison by rounds."
	switch r.Experiment.Pairing {
	case "rounds":
		how = "paired by round (pairing: rounds): the geometric mean of each round's ratio to the baseline's run of the " +
			"same round, its 95 % t interval, and a verdict where that interval excludes 1 (α = 0.05)"
		also = " The unpaired figures are in each cell's note."
	case "duets":
		how = "paired by duet (order: duet): the geometric mean of each duet's ratio, its 95 % t interval, and a verdict " +
			"where that interval excludes 1 (α = 0.05)"
		also = " The unpaired figures are in each cell's note."
	}
	format.Wrap(w, "", "Throughput: mean ± 95 % CI half-width over the ok runs (N = ok/all runs). Overhead: throughput lost "+
		"versus the group's baseline, + is slower, "+how+"; "+
		"\"no diff >X%\": no difference larger than X %, the smallest overhead these runs could detect (80 % power). "+
		"p99 in µs from the merged latency histograms of the ok runs."+also, format.Cols)
	fmt.Fprintln(w)
}

// hostLine summarises the host environment in one line.
func hostLine(env map[string]string) string {
	var parts []string
	add := func(prefix, k, suffix string) {
		if v := env[k]; v != "" {
			parts = append(parts, prefix+v+suffix)
		}
	}
	add("", "hostname", "")
	add("", "cpu_model", "")
	add("", "num_cpu", " CPUs")
	if k := env["kernel"]; k != "" {
		parts = append(parts, "Linux "+strings.Fields(k)[0])
	}
	add("cgroup ", "cgroup_mode", "")
	add("", "os", "")
	return strings.Join(parts, ", ")
}

// columnKeys are the params shown as columns: those that vary inside some group, else those
// that vary at all.
func (r *Report) columnKeys() []string {
	in := map[string]bool{}
	for _, g := range r.Groups {
		for _, k := range g.Differ {
			in[k] = true
		}
	}
	var cols []string
	for _, k := range r.Keys {
		if in[k] {
			cols = append(cols, k)
		}
	}
	if len(cols) == 0 {
		cols = slices.Clone(r.Varying)
	}
	return cols
}

// groupTitle names a group by the varying params its cells share that are not columns.
func (r *Report) groupTitle(g *Group, cols []string) string {
	var keys []string
	for _, k := range r.Varying {
		if !slices.Contains(cols, k) {
			keys = append(keys, k)
		}
	}
	t := kvLabel(g.Shared, keys, " ")
	switch {
	case g.Baseline == "":
		t = strings.TrimSpace(t + " (no baseline)")
	case t == "":
		t = "baseline " + label(r.Cell(g.Baseline).Params, cols)
	}
	return t
}

// cellValues are a cell's values of the column keys.
func cellValues(c *Cell, cols []string) []string {
	if len(cols) == 0 {
		return nil
	}
	var out []string
	for _, k := range cols {
		out = append(out, format.OrDash(c.Params[k]))
	}
	return out
}

func textRow(r *Report, c *Cell, cols []string, notes *footnotes) []string {
	row := cellValues(c, cols)
	if len(cols) == 0 {
		row = nil
	}
	row = append(row, fmt.Sprintf("%d/%d", c.Runs, c.Runs+len(c.Failed)))
	thr := "-"
	if c.Runs > 0 {
		thr = format.Group(c.Throughput.Mean)
		if c.Throughput.CI95.Valid {
			thr += " ± " + format.Group(c.Throughput.CI95.HalfWidth())
		}
	}
	row = append(row, thr)
	ovh, verdict := "-", "-"
	switch o := c.Overhead; {
	case c.IsBaseline():
		ovh, verdict = "baseline", ""
		if c.Emulated {
			verdict = "emulated"
		}
	case o != nil:
		ovh = format.Signed(o.OverheadPct)
		if o.OverheadPctCI.Valid {
			ovh += " (" + format.OneDec(o.OverheadPctCI.Lo) + " … " + format.OneDec(o.OverheadPctCI.Hi) + ")"
		}
		verdict = format.Verdict(o)
		if o.Underpowered {
			verdict += "*"
		}
	}
	row = append(row, ovh, verdict)
	for _, op := range r.Ops {
		v := "-"
		if l := c.LatencyOf(op); l != nil && l.Count > 0 {
			v = format.Sig3(l.P99)
		}
		row = append(row, v)
	}
	return append(row, notes.marker(c.ID))
}

// footnotes numbers the cells' warnings in display order.
type footnotes struct {
	byCell map[string][]int
	list   []footnote
}

type footnote struct {
	cell *Cell
	w    Warning
}

func (r *Report) footnotes() *footnotes {
	f := &footnotes{byCell: map[string][]int{}}
	for _, g := range r.Groups {
		for _, c := range g.Cells {
			for _, w := range c.Warnings {
				f.list = append(f.list, footnote{c, w})
				f.byCell[c.ID] = append(f.byCell[c.ID], len(f.list))
			}
		}
	}
	return f
}

func (f *footnotes) marker(id string) string {
	ns := f.byCell[id]
	if len(ns) == 0 {
		return ""
	}
	var s []string
	for _, n := range ns {
		s = append(s, strconv.Itoa(n))
	}
	return "[" + strings.Join(s, ",") + "]"
}

func writeTextNotes(w io.Writer, r *Report, notes *footnotes) {
	underpowered := false
	for _, c := range r.Cells {
		if c.Overhead != nil && c.Overhead.Underpowered {
			underpowered = true
		}
	}
	if underpowered {
		fmt.Fprintln(w)
		format.Wrap(w, "", "* too few runs for a verdict at α = 0.05: \"no diff\" means \"not enough runs\", see the warnings.", format.Cols)
	}
	if len(notes.list) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Warnings")
	}
	for i, n := range notes.list {
		name := label(n.cell.Params, r.Varying)
		if name == "" {
			name = n.cell.ID
		}
		runs := ""
		if n.w.Runs > 0 && !isReportLevel(n.w.Code) {
			runs = fmt.Sprintf(", %d of %d runs", n.w.Runs, n.cell.Runs+len(n.cell.Failed))
		}
		prefix := fmt.Sprintf("  [%d] ", i+1)
		format.Wrap(w, prefix, fmt.Sprintf("%s — %s %s%s: %s", name, n.w.Severity, n.w.Code, runs, n.w.Message), format.Cols)
	}
	writeTextSkipped(w, r)
}

// writeTextSkipped lists the skipped cells under their reasons.
func writeTextSkipped(w io.Writer, r *Report) {
	var reasons []string
	byReason := map[string][]string{}
	n := 0
	for _, c := range r.Cells {
		if !c.Skipped() {
			continue
		}
		n++
		if byReason[c.SkippedReason] == nil {
			reasons = append(reasons, c.SkippedReason)
		}
		name := label(c.Params, r.Keys)
		if name == "" {
			name = c.ID
		}
		byReason[c.SkippedReason] = append(byReason[c.SkippedReason], name)
	}
	if n == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Skipped cells (%d, not run on this host; values of %s)\n", n, strings.Join(r.Keys, ", "))
	for _, reason := range reasons {
		// A cell can fail several checks (errors.Join puts one per line): keep them apart.
		format.Wrap(w, "  ", strings.ReplaceAll(reason, "\n", "; ")+":", format.Cols)
		format.Wrap(w, "    ", strings.Join(byReason[reason], "; "), format.Cols)
	}
}
