package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

// The measured window section (a textSection): where each cell's window started and how long
// its runs waited for a quiet host.
// windowBuilder computes the window section (its place: sectionBuilders, report/section.go).
var windowBuilder builder = textBuilder("window", "Measured window", writeTextWindow)

// The metrics the runner stores for the measured window, by their one name (results/names.go).
const (
	metricTruncated = results.MetricTruncated
	metricQuietWait = results.MetricQuietWait
)

// windowRows are the per-cell steady-state cuts and quiet-start waits (seconds over the ok
// runs), for every view of the report.
func (r *Report) windowRows() (rows []windowRow) {
	for _, c := range r.Cells {
		var row windowRow
		row.Cell = c.ID
		for _, m := range c.Metrics {
			switch m.Name {
			case metricTruncated:
				row.Cut = m.Summary
			case metricQuietWait:
				row.Wait = m.Summary
			}
		}
		row.NotApplied = c.SteadyNotApplied
		if row.Cut.N > 0 || row.Wait.N > 0 || len(row.NotApplied) > 0 {
			rows = append(rows, row)
		}
	}
	return rows
}

type windowRow struct {
	Cell       string
	Cut, Wait  stats.Summary
	NotApplied map[results.Steady]int // runs whose steady-state detection was not applied, by why
}

// writeTextWindow prints where each cell's measured window started (the steady-state cut)
// and how long its runs waited for a quiet host, so that neither is silent.
func writeTextWindow(w io.Writer, r *Report) {
	rows := r.windowRows()
	if len(rows) == 0 {
		if r.SteadyStateOff {
			fmt.Fprintln(w, "\nsteady-state detection: off (steadyState: off): each measured window starts after the warm-up")
		}
		return
	}
	fmt.Fprintln(w, "\nmeasured window: seconds cut from its start as transient (MSER steady-state detection) and seconds waited for a quiet host before the run, mean [min–max] (n runs):")
	for _, row := range rows {
		cut := "cut " + fmtSeconds(row.Cut)
		n, why := notApplied(row.NotApplied)
		switch {
		case n > 0 && row.Cut.N == 0:
			cut = fmt.Sprintf("not cut: steady-state detection not applied in its %d runs (%s)", n, why)
		case n > 0:
			cut = fmt.Sprintf("%s; not applied in %d more runs (%s)", cut, n, why)
		}
		fmt.Fprintf(w, "  %s  %s, quiet-start wait %s\n", row.Cell, cut, fmtSeconds(row.Wait))
	}
}

// notApplied totals the runs whose steady-state detection was not applied and says why: the
// reason alone when all share one, else each reason with its count.
func notApplied(by map[results.Steady]int) (int, string) {
	words := []struct {
		s    results.Steady
		text string
	}{
		{results.SteadyTooShort, fmt.Sprintf("fewer than %d intervals", stats.MinMSERIntervals)},
		{results.SteadyNoMinimum, "MSER found no point to cut at"},
		{results.SteadyCutFailed, "the cut MSER chose could not be made"},
	}
	total := 0
	var why []string
	for _, w := range words {
		if n := by[w.s]; n > 0 {
			total += n
			why = append(why, fmt.Sprintf("%d: %s", n, w.text))
		}
	}
	if len(why) == 1 {
		_, one, _ := strings.Cut(why[0], ": ")
		return total, one
	}
	return total, strings.Join(why, "; ")
}

func fmtSeconds(s stats.Summary) string {
	switch s.N {
	case 0:
		return "not recorded"
	case 1:
		return fmt.Sprintf("%.1f s (n=1)", s.Mean)
	}
	return fmt.Sprintf("%.1f s [%.1f–%.1f] (n=%d)", s.Mean, s.Min, s.Max, s.N)
}
