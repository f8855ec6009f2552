package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/results"
)

// whereSentence names the components that account for most of a cell's extra CPU per
// operation over its baseline (docs/report.md, "Where the time goes"): those whose
// difference's interval excludes 0 and has the total's sign, largest first, until they cover
// half of the total or are all named. It names nothing from a single run, nor when the
// total's interval includes 0.
func whereSentence(label, baseLabel string, total *WhereDiff, comps []WhereComponent, softirq *WhereDiff) string {
	head := label + " vs " + baseLabel + ": "
	var b strings.Builder
	b.WriteString(head)
	switch {
	case total == nil || total.Mean == nil:
		b.WriteString("no host busy CPU to compare")
		return b.String()
	case total.N < 2 || total.BaselineN < 2:
		fmt.Fprintf(&b, "%s µs/op from n=%d vs n=%d runs: a single run names no component (n < 2)",
			signed(*total.Mean), total.N, total.BaselineN)
		return b.String()
	}
	fmt.Fprintf(&b, "%s µs/op %s named", signed(*total.Mean), diffCI(total))
	switch {
	case total.ci.Contains(0):
		b.WriteString(": the interval includes 0, no difference to explain")
	default:
		b.WriteString(explain(*total.Mean, comps))
	}
	if softirq != nil && softirq.Mean != nil {
		fmt.Fprintf(&b, "; in soft interrupts host-wide %s %s", signed(*softirq.Mean), diffCI(softirq))
	}
	return b.String()
}

// explain is the part of the sentence that names components for a total difference.
func explain(total float64, comps []WhereComponent) string {
	sign := math.Copysign(1, total)
	var named, eligible []WhereComponent
	for _, c := range comps {
		d := c.Diff
		if d == nil || d.Mean == nil || c.Group == results.GroupOther {
			continue // other tasks are not the box's: the total leaves them out
		}
		eligible = append(eligible, c)
		if d.ci.Valid && !d.ci.Contains(0) && *d.Mean*sign > 0 {
			named = append(named, c)
		}
	}
	bySize := func(a, b WhereComponent) int {
		return -cmpFloat(math.Abs(*a.Diff.Mean), math.Abs(*b.Diff.Mean))
	}
	if len(named) == 0 {
		if len(eligible) == 0 {
			return "; no component has a difference to show"
		}
		// The largest in the total's direction, else the largest at all.
		slices.SortStableFunc(eligible, bySize)
		c := eligible[0]
		for _, e := range eligible {
			if *e.Diff.Mean*sign > 0 {
				c = e
				break
			}
		}
		return fmt.Sprintf("; the largest component is %s %s %s, but the intervals do not single one out",
			componentName(c), signed(*c.Diff.Mean), diffCI(c.Diff))
	}
	slices.SortStableFunc(named, bySize)
	var parts []string
	covered := 0.0
	for _, c := range named {
		parts = append(parts, fmt.Sprintf("%s %s %s", componentName(c), signed(*c.Diff.Mean), diffCI(c.Diff)))
		covered += *c.Diff.Mean
		if covered*sign >= math.Abs(total)/2 {
			break
		}
	}
	return fmt.Sprintf(", of which %s (together %s %% of it)", strings.Join(parts, ", "), strconv.FormatFloat(covered/total*100, 'f', 0, 64))
}

func componentName(c WhereComponent) string {
	if c.Name == "" {
		return c.Group
	}
	return c.Group + " " + c.Name
}

// num3 formats a figure for reading: thousands grouped, one decimal from 1, two significant
// digits below (0.042), so that a small per-operation count is not shown as 0.
func num3(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return format.Group(v)
	case a >= 1:
		return format.OneDec(v)
	}
	// Two significant digits, never in exponent form: 0.042, 0.000093.
	digits := max(1, 1-int(math.Floor(math.Log10(a))))
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if r, _ := strconv.ParseFloat(s, 64); math.Abs(r) >= 1 { // 0.996 rounds to 1.0
		return format.OneDec(v)
	}
	return s
}

// signed is num3 with an explicit sign.
func signed(v float64) string {
	s := num3(v)
	if v > 0 && s != "0" {
		return "+" + s
	}
	return s
}

// ciText is "(lo … hi)", or "(no interval)" below 2 runs.
func ciText(lo, hi *float64, sign bool) string {
	if lo == nil || hi == nil {
		return "(no interval)"
	}
	f := num3
	if sign {
		f = signed
	}
	return "(" + f(*lo) + " … " + f(*hi) + ")"
}

func diffCI(d *WhereDiff) string { return ciText(d.CILow, d.CIHigh, true) }

// figureText is "mean (lo … hi) n=N".
func figureText(f *WhereFigure) string {
	if f == nil {
		return "—"
	}
	return fmt.Sprintf("%s %s n=%d", num3(f.Mean), ciText(f.CILow, f.CIHigh, false), f.N)
}

// unitText is "mean unit (lo … hi) n=N".
func unitText(f *WhereFigure) string {
	if f == nil {
		return "—"
	}
	return fmt.Sprintf("%s %s %s n=%d", num3(f.Mean), f.Unit, ciText(f.CILow, f.CIHigh, false), f.N)
}

// booksText is how well the components add up to the host's busy CPU, and other's share.
func booksText(c *WhereCell) string {
	if c.Balance.N == 0 { // no run had a host busy CPU above 0: nothing to balance against
		return fmt.Sprintf("the components sum to %s µs/op; no run has host busy CPU to balance them against", num3(c.Sum.Mean))
	}
	s := fmt.Sprintf("other tasks are %s %% %s of host busy (a run above 10 %% is warned: cpu_unaccounted)",
		num3(c.OtherShare.Mean), ciText(c.OtherShare.CILow, c.OtherShare.CIHigh, false))
	// The components add up to host busy by construction; a sum that does not is shown.
	if math.Abs(c.Balance.Mean) >= 0.05 {
		s += fmt.Sprintf("; the components sum to %s µs/op, off host busy by %s %% %s", num3(c.Sum.Mean),
			signed(c.Balance.Mean), ciText(c.Balance.CILow, c.Balance.CIHigh, true))
	}
	return s
}

// softirqText is the host-wide soft interrupts of a cell, and their difference.
func softirqText(c *WhereCell) string {
	s := unitText(c.Softirq)
	if c.Versus != nil && c.Versus.Softirq != nil {
		s += ", Δ " + diffText(c.Versus.Softirq)
	}
	return s
}

// diffText is "+d (lo … hi)", or the note of a difference that cannot be formed.
func diffText(d *WhereDiff) string {
	if d == nil {
		return ""
	}
	if d.Mean == nil {
		return "— (" + d.Note + ")"
	}
	return signed(*d.Mean) + " " + diffCI(d)
}

// componentValue is a component's figure, or why there is none: never a 0 for a component
// that was not measured.
func componentValue(c WhereComponent) string {
	switch {
	case c.CPU != nil && c.NotMeasured != "":
		return figureText(c.CPU) + "; not measured in the other runs: " + c.NotMeasured
	case c.CPU != nil:
		return figureText(c.CPU)
	case c.NotMeasured != "":
		return "not measured (" + c.NotMeasured + ")"
	}
	return "— (not in this box)"
}

// writeTextWhere prints the section: per cell a table of the components and the other costs,
// and the sentence against the baseline.
func writeTextWhere(w io.Writer, cells []*WhereCell) {
	if len(cells) == 0 {
		return
	}
	fmt.Fprintln(w, "\nwhere the time goes: the host's busy CPU per operation booked to the components that did the work,")
	fmt.Fprintln(w, "µs/op: mean (95% CI) n=runs; Δ = this cell − its baseline with Welch's 95% interval (rule: docs/report.md);")
	fmt.Fprintln(w, "interrupts \"idle\": tick accounting charges interrupts to the task they interrupt, so soft interrupts are")
	fmt.Fprintln(w, "inside the figures above; \"all\": the kernel accounts interrupt time apart, in kernel interrupts")
	for _, c := range cells {
		fmt.Fprintf(w, "  %s  (n=%d; interrupts: %s)\n", c.label, c.Runs, format.OrDash(c.Interrupts))
		head := []string{"component", "µs/op", "Δ vs baseline"}
		if c.Versus == nil {
			head = head[:2]
		}
		rows := [][]string{head}
		var why []string
		for _, comp := range c.Components {
			v := componentValue(comp)
			if comp.NotMeasured != "" { // the reason under the table: it would widen every row
				v = strings.Replace(v, comp.NotMeasured, "below", 1)
				why = append(why, componentName(comp)+": "+comp.NotMeasured)
			}
			rows = append(rows, []string{componentName(comp), v, diffText(comp.Diff)})
		}
		named := []string{"= named (all but other)", figureText(&c.Named), ""}
		total := []string{"= host busy", figureText(&c.HostBusy), ""}
		if c.Versus != nil {
			named[2], total[2] = diffText(c.Versus.Total), diffText(c.Versus.HostBusy)
		}
		rows = append(rows, named, total)
		writeWhereRows(w, rows)
		for _, line := range why {
			format.Wrap(w, "    not measured: ", line, format.Cols)
		}
		fmt.Fprintln(w, "    books: "+booksText(c))
		if c.Softirq != nil {
			fmt.Fprintln(w, "    of which in soft interrupts (host-wide): "+softirqText(c))
		}
		writeTextCosts(w, "kernel events per op", c.Events)
		writeTextCosts(w, "other costs per op", c.Costs)
		if c.Versus != nil {
			format.Wrap(w, "    ", c.Versus.Sentence, format.Cols)
		}
		if c.VersusNote != "" {
			format.Wrap(w, "    ", c.VersusNote, format.Cols)
		}
	}
}

// interruptFactText says what kernel.interrupts holds, in words.
func interruptFactText(v string) string {
	switch v {
	case "idle":
		return "idle only (tick accounting: soft interrupts are inside the tasks' figures)"
	case "all":
		return "all (interrupt time accounted apart from tasks)"
	}
	return v
}

func writeTextCosts(w io.Writer, title string, costs []WhereCost) {
	if len(costs) == 0 {
		return
	}
	rows := [][]string{}
	for _, c := range costs {
		if zeroCost(c) {
			continue // nothing happened on either side (the page, JSON and CSV list it)
		}
		rows = append(rows, []string{c.What, unitText(c.Value), diffText(c.Diff)})
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "    %s:\n", title)
	for _, row := range alignRows(rows) {
		fmt.Fprintln(w, "      "+strings.TrimRight(row, " "))
	}
}

func writeWhereRows(w io.Writer, rows [][]string) {
	for _, row := range alignRows(rows) {
		fmt.Fprintln(w, "    "+strings.TrimRight(row, " "))
	}
}

// alignRows pads each column to its widest cell.
func alignRows(rows [][]string) []string {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], format.Width(cell))
		}
	}
	out := make([]string, len(rows))
	for j, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(format.Pad(cell, widths[i], false))
		}
		out[j] = b.String()
	}
	return out
}

// zeroCost says a cost is 0 in every run of both sides.
func zeroCost(c WhereCost) bool {
	z := func(p *float64) bool { return p == nil || *p == 0 }
	zero := func(f *WhereFigure) bool { return f == nil || (f.Mean == 0 && z(f.CILow) && z(f.CIHigh)) }
	return zero(c.Value) && (c.Diff == nil || c.Diff.Mean == nil || *c.Diff.Mean == 0)
}
