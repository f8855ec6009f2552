package compare

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/stats"
)

// WriteText writes the comparison as a terminal table and a one-line result.
func WriteText(w io.Writer, c *Comparison) error {
	tw := format.Terminal(w) // strings from results files reach a terminal escaped
	bw := bufio.NewWriter(tw)
	fmt.Fprintf(bw, "BASE %s (%s)  vs  NEXT %s (%s); regression tolerance %s %% of BASE throughput\n",
		format.OrDash(c.Base.Name), format.OrDash(c.Base.ID), format.OrDash(c.Next.Name), format.OrDash(c.Next.ID), format.OneDec(c.MaxRegression*100))
	for _, e := range c.Env {
		format.Wrap(bw, "  changed "+e.Key+": ", format.OrDash(e.Base)+" → "+format.OrDash(e.Next), format.Cols)
	}
	if c.SpecChanged {
		fmt.Fprintln(bw, "  the experiment files differ: check that the workloads are comparable")
	}
	format.Wrap(bw, "", "Change: NEXT's mean throughput versus BASE's, in % (negative = slower), with the 95 % Fieller CI; "+
		"verdict from Mann–Whitney and the CI at α = 0.05; \"no diff >X%\": none larger than X % (detectable at 80 % power). "+
		"p99: merged histograms, µs.", format.Cols)
	fmt.Fprintln(bw)

	head := []string{"CELL", "RUNS", "BASE ops/s", "NEXT ops/s", "CHANGE % (95% CI)", "VERDICT", "p99 µs BASE → NEXT", "RESULT"}
	right := map[int]bool{1: true, 2: true, 3: true}
	rows := [][]string{head}
	for _, cc := range c.Cells {
		row := []string{cc.ID, fmt.Sprintf("%d/%d", cc.BaseRuns, cc.NextRuns), "-", "-", "-", "-", p99Change(cc.P99), ""}
		if t := cc.Throughput; t != nil {
			row[2], row[3] = format.Group(t.Baseline.Mean), format.Group(t.Candidate.Mean)
			row[4] = format.Signed(-t.OverheadPct)
			if t.OverheadPctCI.Valid {
				row[4] += " (" + format.OneDec(-t.OverheadPctCI.Hi) + " … " + format.OneDec(-t.OverheadPctCI.Lo) + ")"
			}
			row[5] = format.Verdict(t)
			if t.Underpowered {
				row[5] += "*"
			}
		}
		switch {
		case cc.Regressed:
			row[7] = "REGRESSION"
		case cc.Throughput == nil:
			row[7] = "not compared"
		case cc.Throughput.Verdict == stats.VerdictSlower:
			row[7] = "within tolerance"
		default:
			row[7] = "ok"
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(head))
	for _, row := range rows {
		for i, s := range row {
			widths[i] = max(widths[i], format.Width(s))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, s := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(format.Pad(s, widths[i], right[i]))
		}
		fmt.Fprintln(bw, strings.TrimRight(b.String(), " "))
	}
	notes := false
	for _, cc := range c.Cells {
		if cc.Note != "" {
			if !notes {
				fmt.Fprintln(bw)
				notes = true
			}
			format.Wrap(bw, "  "+cc.ID+": ", cc.Note, format.Cols)
		}
	}
	if len(c.OnlyBase)+len(c.OnlyNext) > 0 {
		fmt.Fprintln(bw)
	}
	if len(c.OnlyBase) > 0 {
		format.Wrap(bw, "only in BASE: ", strings.Join(c.OnlyBase, ", "), format.Cols)
	}
	if len(c.OnlyNext) > 0 {
		format.Wrap(bw, "only in NEXT: ", strings.Join(c.OnlyNext, ", "), format.Cols)
	}
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, c.verdictLine())
	if err := bw.Flush(); err != nil {
		return err
	}
	return tw.Flush()
}

func p99Change(ls []LatencyChange) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%s %s → %s", l.Op, format.Sig3(l.Base), format.Sig3(l.Next)))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// verdictLine is the comparison's result in one sentence.
func (c *Comparison) verdictLine() string {
	var reg []string
	for _, cc := range c.Cells {
		if cc.Regressed {
			reg = append(reg, fmt.Sprintf("%s (%s %%)", cc.ID, format.Signed(-cc.Throughput.OverheadPct)))
		}
	}
	s := fmt.Sprintf("PASS: no significant throughput regression beyond %s %% in %d compared cells", format.OneDec(c.MaxRegression*100), len(c.Cells))
	if len(reg) > 0 {
		s = fmt.Sprintf("FAIL: %d of %d cells regressed beyond %s %%: %s", len(reg), len(c.Cells),
			format.OneDec(c.MaxRegression*100), strings.Join(reg, "; "))
	}
	if u := c.Underpowered(); len(u) > 0 {
		s += fmt.Sprintf(" (%d cells had too few runs to tell)", len(u))
	}
	return s
}
