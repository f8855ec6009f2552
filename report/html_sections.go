package report

import (
	"fmt"
	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/stats"
	"html/template"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/results"
)

// The sections of the HTML page, each turning the report into its part of the view.

// findings are the headline sentences: significant overheads, largest first; the rest named
// as "no significant difference".
func (v *page) findings(r *Report) {
	type item struct {
		f   finding
		pct float64
	}
	var items []item
	for _, g := range r.Groups {
		if g.Baseline == "" {
			continue
		}
		base := r.Cell(g.Baseline)
		ctx := kvLabel(g.Shared, r.Varying, ", ")
		for _, c := range g.Cells {
			o := c.Overhead
			if o == nil {
				continue
			}
			name := label(c.Params, g.Differ)
			if o.Verdict == "no significant difference" {
				s := name
				if ctx != "" {
					s += " (" + ctx + ")"
				}
				s += " " + format.Signed(o.OverheadPct) + " %"
				if o.Underpowered {
					s += ", too few runs"
				}
				v.Same = append(v.Same, s)
				continue
			}
			fi := finding{Cell: name, Context: ctx, Baseline: label(base.Params, g.Differ), Verdict: string(o.Verdict),
				P: format.PValue(o.UTest.P), N: fmt.Sprintf("%d vs %d runs", o.Candidate.N, o.Baseline.N)}
			pct := o.OverheadPct
			if o.Verdict == "faster" {
				pct = -pct
			}
			fi.Pct = format.OneDec(pct)
			if ci := o.OverheadPctCI; ci.Valid {
				lo, hi := ci.Lo, ci.Hi
				if o.Verdict == "faster" {
					lo, hi = -ci.Hi, -ci.Lo
				}
				fi.CI = format.OneDec(lo) + "–" + format.OneDec(hi)
			}
			items = append(items, item{fi, o.OverheadPct})
		}
	}
	slices.SortStableFunc(items, func(a, b item) int {
		return -cmpFloat(a.pct, b.pct)
	})
	for i, it := range items {
		if i == maxFindings {
			v.MoreFindings = len(items) - maxFindings
			break
		}
		v.Findings = append(v.Findings, it.f)
	}
	if len(v.Same) > maxFindings {
		v.MoreSame = len(v.Same) - maxFindings
		v.Same = v.Same[:maxFindings]
	}
}

// maxFindings keeps the headline short; the table below has every cell.
const maxFindings = 8

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// overview builds the main table: one row per cell, grouped by baseline, with the bars.
func (v *page) overview(r *Report, cols []string) {
	fo, ok := newForest(r)
	v.HasForest = ok
	if ok {
		v.Axis = template.HTML(fo.axis())
	}
	for _, g := range r.Groups {
		gv := groupView{Title: r.groupTitle(g, cols)}
		if g.Baseline != "" {
			gv.Baseline = label(r.Cell(g.Baseline).Params, cols)
		}
		var prev []string
		for _, c := range g.Cells {
			row := v.row(r, c, cols, prev)
			prev = cellValues(c, cols)
			if ok {
				row.Bar = template.HTML(fo.bar(c, barTitle(r, c)))
			}
			gv.Rows = append(gv.Rows, row)
		}
		v.Groups = append(v.Groups, gv)
	}
}

func barTitle(r *Report, c *Cell) string {
	name := cellName(r, c)
	if c.IsBaseline() {
		return name + ": baseline"
	}
	if o := c.Overhead; o != nil {
		s := fmt.Sprintf("%s: %s %% throughput lost vs baseline", name, format.Signed(o.OverheadPct))
		if o.OverheadPctCI.Valid {
			s += fmt.Sprintf(" (95 %% CI %s … %s %%)", format.OneDec(o.OverheadPctCI.Lo), format.OneDec(o.OverheadPctCI.Hi))
		}
		return s + ", " + string(o.Verdict)
	}
	return name + ": no overhead"
}

func (v *page) row(r *Report, c *Cell, cols, prev []string) rowView {
	total := c.Runs + len(c.Failed)
	row := rowView{ID: c.ID, Anchor: anchor(c.ID), Baseline: c.IsBaseline(),
		N: fmt.Sprintf("%d/%d", c.Runs, total), NTitle: fmt.Sprintf("%d ok of %d runs", c.Runs, total),
		Warnings: views(c.Warnings, total)}
	for i, val := range cellValues(c, cols) {
		row.Values = append(row.Values, valueView{V: val, Repeat: i < len(prev) && prev[i] == val && slices.Equal(prev[:i], cellValues(c, cols)[:i])})
	}
	for _, w := range c.Warnings {
		switch concerns(w.Code) {
		case "n":
			row.NWarn = true
		case "throughput":
			row.ThrWarn = append(row.ThrWarn, views([]Warning{w}, total)...)
		}
	}
	row.Thr, row.ThrSD = "–", ""
	if c.Runs > 0 {
		t := c.Throughput
		row.Thr = format.Group(t.Mean)
		if t.CI95.Valid {
			row.Thr += " ± " + format.Group(t.CI95.HalfWidth())
			row.ThrSD = fmt.Sprintf("sd %s · CoV %s %%", format.Group(t.SD), format.OneDec(t.CoV*100))
		} else {
			row.ThrSD = "one run: no spread"
		}
	}
	switch o := c.Overhead; {
	case c.IsBaseline():
		row.Ovh, row.Verdict, row.VerdictCls = "baseline", "", "base"
	case o != nil:
		row.Ovh = format.Signed(o.OverheadPct) + " %"
		if o.OverheadPctCI.Valid {
			row.OvhCI = format.OneDec(o.OverheadPctCI.Lo) + " … " + format.OneDec(o.OverheadPctCI.Hi)
		} else {
			row.OvhCI = "no CI"
		}
		row.Verdict = format.Verdict(o)
		row.VerdictCls = strings.ReplaceAll(format.Verdict(&stats.Comparison{Verdict: o.Verdict}), " ", "")
		if o.Underpowered {
			row.Verdict, row.VerdictCls = "too few runs", "weak"
		}
		row.P = "p = " + format.PValue(o.UTest.P)
		if p := c.Paired; p != nil {
			by := "rounds" // what compareCells paired the runs by
			if r.Experiment.Pairing == "duets" {
				by = "duets"
			}
			row.Paired = [2]string{fmt.Sprintf("by %s %s %%", by, format.Signed(p.OverheadPct)),
				fmt.Sprintf("(%s … %s), n = %d", format.OneDec(p.OverheadPctCI.Lo), format.OneDec(p.OverheadPctCI.Hi), p.N)}
		}
	default:
		row.Ovh = "–"
	}
	latWarn := false
	for _, w := range c.Warnings {
		if concerns(w.Code) == "latency" {
			latWarn = true
		}
	}
	for _, op := range r.Ops {
		l := c.LatencyOf(op)
		if l == nil || l.Count == 0 {
			row.P99 = append(row.P99, latView{V: "–", Warn: latWarn})
			continue
		}
		lv := latView{V: format.Sig3(l.P99), Warn: latWarn,
			Title: fmt.Sprintf("%s p99 %s µs from %s ops merged over %d runs", op, format.Sig3(l.P99), format.Group(float64(l.Count)), c.Runs)}
		if s := l.RunP99; s.N > 1 {
			lv.Spread = format.Sig3(s.Min) + "–" + format.Sig3(s.Max)
			lv.Title += fmt.Sprintf("; per-run p99 %s–%s µs", format.Sig3(s.Min), format.Sig3(s.Max))
		}
		row.P99 = append(row.P99, lv)
	}
	return row
}

// spectra draws one latency spectrum per op type and baseline group.
func (v *page) spectra(r *Report) {
	var cs colors
	for _, op := range r.Ops {
		so := spectrumOp{Op: op}
		for gi, g := range r.Groups {
			var lines []spectrumLine
			var legend []legendItem
			for _, c := range g.Cells {
				l := c.LatencyOf(op)
				if l == nil || len(l.Spectrum) == 0 {
					continue
				}
				name := label(c.Params, g.Differ)
				if name == "" {
					name = cellName(r, c)
				}
				col := baselineColor
				if !c.IsBaseline() {
					col = cs.of(name)
				}
				lines = append(lines, spectrumLine{Label: name, Color: col, Baseline: c.IsBaseline(), Points: l.Spectrum, Count: l.Count})
				legend = append(legend, legendItem{Label: name, Color: col, Baseline: c.IsBaseline(),
					Detail: fmt.Sprintf("p50 %s · p99 %s · p99.9 %s µs · %s ops, %d runs", format.Sig3(l.P50), format.Sig3(l.P99), format.Sig3(l.P999), compact(float64(l.Count)), c.Runs)})
			}
			if len(lines) == 0 {
				continue
			}
			title := r.groupTitle(g, r.columnKeys())
			so.Plots = append(so.Plots, spectrumPlot{Title: title, Legend: legend,
				SVG: template.HTML(spectrumChart(fmt.Sprintf("spectrum %s %d", op, gi+1), lines))})
		}
		if len(so.Plots) > 0 {
			v.Spectra = append(v.Spectra, so)
		}
	}
}

// stats is the detailed table: every summary with its n and spread.
func (v *page) stats(r *Report) {
	for _, g := range r.Groups {
		for _, c := range g.Cells {
			t := c.Throughput
			total := c.Runs + len(c.Failed)
			row := statRow{ID: c.ID, Anchor: anchor(c.ID), Label: cellName(r, c), N: fmt.Sprintf("%d/%d", c.Runs, total),
				Warnings: views(c.Warnings, total), Failed: c.Failed}
			if c.Runs > 0 {
				row.Mean, row.Median, row.SD = format.Group(t.Mean), format.Group(t.Median), format.Group(t.SD)
				row.CoV, row.Min, row.Max = format.OneDec(t.CoV*100)+" %", format.Group(t.Min), format.Group(t.Max)
				row.CI = "–"
				if t.CI95.Valid {
					row.CI = format.Group(t.CI95.Lo) + " … " + format.Group(t.CI95.Hi)
				}
			}
			for _, l := range c.Latency {
				sl := statLat{Op: l.Op, Count: format.Group(float64(l.Count))}
				if l.Count > 0 {
					sl.P50, sl.P90, sl.P95, sl.P99 = format.Sig3(l.P50), format.Sig3(l.P90), format.Sig3(l.P95), format.Sig3(l.P99)
					sl.P999, sl.Max = format.Sig3(l.P999), format.Sig3(l.Max)
				} else {
					sl.P50, sl.P90, sl.P95, sl.P99, sl.P999, sl.Max = "–", "–", "–", "–", "–", "–"
				}
				if s := l.RunP99; s.N > 1 {
					sl.RunP99 = format.Sig3(s.Mean) + " ± " + format.Sig3(s.SD)
				} else {
					sl.RunP99 = "–"
				}
				row.Lat = append(row.Lat, sl)
			}
			v.Stats = append(v.Stats, row)
		}
	}
}

// runs draws the time-series panels of every run, one block per cell, with x and y scales
// shared inside a cell so its runs can be compared at a glance.
func (v *page) runs(r *Report) {
	if r.series == nil {
		return
	}
	specs := panelSpecs(r.Ops)
	byCell := map[string][]results.RunRow{}
	for _, run := range r.Runs {
		byCell[run.CellID] = append(byCell[run.CellID], run)
	}
	for _, g := range r.Groups {
		for _, c := range g.Cells {
			runs := byCell[c.ID]
			slices.SortStableFunc(runs, func(a, b results.RunRow) int { return a.Rep - b.Rep })
			cr := cellRuns{ID: c.ID, Label: cellName(r, c), Anchor: anchor(c.ID) + "-runs"}
			cr.Summary = fmt.Sprintf("%d ok, %d failed", c.Runs, len(c.Failed))
			series := make([]*runSeries, len(runs))
			xmax := 0.0
			ymax := make([]float64, len(specs))
			for i, run := range runs {
				s := r.series[run.ID]
				series[i] = s
				for j, ps := range specs {
					for _, l := range ps.get(s) {
						for _, p := range l.pts {
							xmax = math.Max(xmax, p.X)
							ymax[j] = math.Max(ymax[j], p.Y)
						}
					}
				}
			}
			for _, ps := range specs {
				h := panelHead{Title: ps.title + " (" + ps.unit + ")"}
				seen := map[string]bool{}
				for _, s := range series {
					for _, l := range ps.get(s) {
						if !seen[l.name] {
							seen[l.name] = true
							h.Legend = append(h.Legend, legendItem{Label: l.name, Color: l.color})
						}
					}
				}
				if len(h.Legend) < 2 {
					h.Legend = nil
				}
				cr.Heads = append(cr.Heads, h)
			}
			for i, run := range runs {
				rr := runRow{ID: run.ID, Rep: fmt.Sprintf("run %d", run.Rep), Status: run.Status, Reason: oneLine(run.Reason)}
				for j, ps := range specs {
					lines := ps.get(series[i])
					if len(lines) == 0 {
						rr.Panels = append(rr.Panels, panelView{Empty: "no data"})
						continue
					}
					rr.Panels = append(rr.Panels, panelView{SVG: template.HTML(
						panelChart(fmt.Sprintf("%s %s", run.ID, ps.title), lines, xmax, ymax[j], series[i].warmupEnd))})
				}
				cr.Rows = append(cr.Rows, rr)
			}
			if len(cr.Rows) > 0 {
				v.Runs = append(v.Runs, cr)
			}
		}
	}
}

// describeCells names a set of runnable cells by the params they share when exactly the
// runnable cells with those params are in the set ("platform=docker, 8 cells"); otherwise it
// lists their names.
func describeCells(r *Report, ids []string) []string {
	var cells []*Cell
	for _, id := range ids {
		cells = append(cells, r.Cell(id))
	}
	shared, _ := splitParams(cells, r.Keys)
	n := 0
	for _, c := range r.Cells {
		if c.Skipped() {
			continue
		}
		match := true
		for k, val := range shared {
			match = match && c.Params[k] == val
		}
		if match {
			n++
		}
	}
	if len(shared) > 0 && n == len(cells) {
		s := kvLabel(shared, r.Varying, ", ")
		if s == "" {
			s = kvLabel(shared, r.Keys, ", ")
		}
		if len(cells) == 1 {
			return []string{s}
		}
		return []string{fmt.Sprintf("%s (%d cells)", s, len(cells))}
	}
	var names []string
	for _, c := range cells {
		names = append(names, cellName(r, c))
	}
	return names
}

// cellEnv lists the run environment values that differ from the host's, grouping the cells
// that share them.
func (v *page) cellEnv(r *Report) {
	var order []string
	by := map[string]*cellEnvView{}
	for _, c := range r.Cells {
		if len(c.Env) == 0 {
			continue
		}
		var env []kv
		var key strings.Builder
		for _, k := range slices.Sorted(maps.Keys(c.Env)) {
			env = append(env, kv{k, c.Env[k]})
			fmt.Fprintf(&key, "%s=%s\n", k, c.Env[k])
		}
		ce := by[key.String()]
		if ce == nil {
			ce = &cellEnvView{Env: env}
			by[key.String()] = ce
			order = append(order, key.String())
		}
		ce.Cells = append(ce.Cells, c.ID)
	}
	for _, k := range order {
		ce := by[k]
		ce.Cells = describeCells(r, ce.Cells)
		v.CellEnv = append(v.CellEnv, *ce)
	}
}
