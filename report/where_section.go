package report

import (
	"encoding/csv"
	"html/template"
	"io"
	"strconv"
)

var whereTmpl = sectionTemplate("where")

// whereSection is "Where the time goes": per cell with the account (cpu_ns_per_op.… metrics),
// its components with intervals, the books' balance, the other costs per operation, and
// against the baseline the differences and the sentence (where_build.go, where_text.go). In
// the terminal a table per cell, on the page a stacked bar per cell and the table, in JSON
// the key where_time_goes, and the CSV form where-csv. Its model is the cells' accounts,
// computed once when Build builds it; no cell has one in a results file without the metrics,
// and the section then shows nothing.
type whereSection struct{ cells []*WhereCell }

// whereBuilder computes the section (its place: sectionBuilders, report/section.go).
var whereBuilder builder = func(r *Report) (Section, error) { return whereSection{r.whereCells()}, nil }

func (whereSection) Head() Head {
	return Head{Anchor: "where", Title: "Where the time goes", Nav: true}
}

func (s whereSection) Text(w io.Writer) { writeTextWhere(w, s.cells) }

func (s whereSection) JSON() (string, any) {
	if len(s.cells) == 0 {
		return "", nil
	}
	return "where_time_goes", s.cells
}

func (s whereSection) HTML() (template.HTML, error) {
	if len(s.cells) == 0 {
		return "", nil
	}
	return renderHTML(whereTmpl, whereViews(s.cells))
}

func (s whereSection) CSV() []CSVForm {
	return []CSVForm{{Name: CSVWhere, Write: func(w io.Writer) error { return writeWhereCSV(w, s.cells) }}}
}

// whereCSVHead are the columns of where-csv: one row per cell × figure (kind cpu: a
// component, group and name; total: host busy; softirq: host-wide soft interrupts, the
// overlay; books: balance_pct and other_share_pct; event and cost: a per_op figure, name its
// what), the figure's mean and 95 % bounds with n, its unit, and against the baseline the
// difference with Welch's bounds, or why there is none.
var whereCSVHead = []string{"cell", "baseline", "kind", "group", "name", "unit", "n", "mean", "ci_low", "ci_high",
	"not_measured", "baseline_n", "diff", "diff_ci_low", "diff_ci_high", "diff_note"}

// writeWhereCSV writes the where-csv form (whereCSVHead).
func writeWhereCSV(w io.Writer, cells []*WhereCell) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(whereCSVHead); err != nil {
		return err
	}
	for _, c := range cells {
		base := ""
		if c.Versus != nil {
			base = c.Versus.Baseline
		}
		row := func(kind, group, name string, f *WhereFigure, unit, notMeasured string, d *WhereDiff) error {
			rec := []string{c.Cell, base, kind, group, name, unit, "", "", "", "", notMeasured}
			if f != nil {
				rec[6], rec[7], rec[8], rec[9] = strconv.Itoa(f.N), num(f.Mean), optNum(f.CILow), optNum(f.CIHigh)
			}
			rec = append(rec, diffCSV(d)...)
			return cw.Write(rec)
		}
		for _, comp := range c.Components {
			if err := row("cpu", comp.Group, comp.Name, comp.CPU, unitMicrosPerOp, comp.NotMeasured, comp.Diff); err != nil {
				return err
			}
		}
		var total, soft *WhereDiff
		if c.Versus != nil {
			total, soft = c.Versus.Total, c.Versus.Softirq
		}
		if err := row("total", "host", "busy", &c.HostBusy, unitMicrosPerOp, "", total); err != nil {
			return err
		}
		if c.Softirq != nil {
			if err := row("softirq", "host", "softirq", c.Softirq, unitMicrosPerOp, "", soft); err != nil {
				return err
			}
		}
		if err := row("books", "", "balance_pct", &c.Balance, unitPct, "", nil); err != nil {
			return err
		}
		if err := row("books", "", "other_share_pct", &c.OtherShare, unitPct, "", nil); err != nil {
			return err
		}
		for _, part := range []struct {
			kind  string
			costs []WhereCost
		}{{"event", c.Events}, {"cost", c.Costs}} {
			for _, k := range part.costs {
				unit := ""
				if k.Value != nil {
					unit = k.Value.Unit
				} else if k.Diff != nil {
					unit = k.Diff.Unit
				}
				if err := row(part.kind, "", k.What, k.Value, unit, "", k.Diff); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func diffCSV(d *WhereDiff) []string {
	if d == nil {
		return []string{"", "", "", "", ""}
	}
	out := []string{strconv.Itoa(d.BaselineN), "", optNum(d.CILow), optNum(d.CIHigh), d.Note}
	if d.Mean != nil {
		out[1] = num(*d.Mean)
	}
	return out
}

func optNum(v *float64) string {
	if v == nil {
		return ""
	}
	return num(*v)
}
