package report

import (
	"maps"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

// whereCells are the accounts of r's cells in display order, each compared with its
// baseline's account where both have one.
func (r *Report) whereCells() []*WhereCell {
	if len(r.decoded) != len(r.Runs) { // a Report not made by Build
		r.decodeResults()
	}
	byID := make(map[string]int, len(r.Runs))
	for i := range r.Runs {
		byID[r.Runs[i].ID] = i
	}
	byCell := map[string]*WhereCell{}
	var out []*WhereCell
	for _, c := range r.Cells {
		if c.Skipped() {
			continue
		}
		if runs := r.cellAccounts(c, byID); len(runs) > 0 {
			w := buildWhereCell(c.ID, kvLabel(c.Params, r.Varying, "/"), runs)
			byCell[c.ID] = w
			out = append(out, w)
		}
	}
	for _, c := range r.Cells {
		w, b := byCell[c.ID], byCell[c.BaselineID]
		switch {
		case w == nil || c.IsBaseline() || c.BaselineID == "":
		case b != nil:
			compareWhere(w, b)
		default:
			w.VersusNote = "its baseline " + c.BaselineID + " has no account of where the time goes: no differences"
		}
	}
	return out
}

// buildWhereCell summarises the runs' accounts of one cell.
func buildWhereCell(id, label string, runs []runAccount) *WhereCell {
	w := &WhereCell{Cell: id, label: format1(label, id), Runs: len(runs), Interrupts: interruptsFact(runs)}
	busyName := results.CPUPerOp(results.GroupHost, "busy")
	cpu := map[compKey][]float64{}
	perOp := map[string][]float64{}
	var busy, sums, named, balance, other, softirq []float64
	for _, run := range runs {
		b := run.metrics[busyName]
		busy = append(busy, b)
		var sum, oth float64
		for _, name := range slices.Sorted(maps.Keys(run.metrics)) { // sums in one order: goldens
			v := run.metrics[name]
			if g, n, ok := results.SplitCPUPerOp(name); ok && g != results.GroupHost {
				cpu[compKey{g, n}] = append(cpu[compKey{g, n}], v)
				sum += v
				if g == results.GroupOther {
					oth += v
				}
			} else if what, ok := results.SplitPerOp(name); ok {
				perOp[what] = append(perOp[what], v)
			}
		}
		sums = append(sums, sum)
		named = append(named, sum-oth)
		if b > 0 {
			balance = append(balance, (sum-b)/b*100)
			other = append(other, oth/b*100)
		}
		if v, ok := run.metrics[metricSoftirqPerOp]; ok {
			softirq = append(softirq, v)
		}
	}
	w.HostBusy = *figure(busy, 1e-3, unitMicrosPerOp)
	w.Sum = *figure(sums, 1e-3, unitMicrosPerOp)
	w.Named = *figure(named, 1e-3, unitMicrosPerOp)
	w.Balance, w.OtherShare = orZero(figure(balance, 1, unitPct), unitPct), orZero(figure(other, 1, unitPct), unitPct)
	w.Softirq = figure(softirq, 1e-3, unitMicrosPerOp)
	nm := notMeasured(runs)
	for k := range nm {
		if _, ok := cpu[k]; !ok && k.group != results.GroupHost {
			cpu[k] = nil
		}
	}
	for k, vs := range cpu {
		w.Components = append(w.Components, WhereComponent{Group: k.group, Name: k.name,
			CPU: figure(vs, 1e-3, unitMicrosPerOp), NotMeasured: nm[k]})
	}
	orderComponents(w.Components)
	for _, what := range slices.Sorted(maps.Keys(perOp)) {
		cost := WhereCost{What: what, Value: figure(perOp[what], 1, perOpUnit(what))}
		if strings.HasPrefix(what, "softirq_") {
			w.Events = append(w.Events, cost)
		} else {
			w.Costs = append(w.Costs, cost)
		}
	}
	return w
}

func format1(label, id string) string {
	if label == "" {
		return id
	}
	return label
}

func orZero(f *WhereFigure, unit string) WhereFigure {
	if f == nil {
		return WhereFigure{Unit: unit}
	}
	return *f
}

// perOpUnit is the unit of a per_op.<what> figure, from the unit in its name.
func perOpUnit(what string) string {
	switch {
	case strings.HasSuffix(what, "_bytes"):
		return "bytes/op"
	case strings.HasSuffix(what, "_ns"):
		return "ns/op"
	}
	return "count/op"
}

// diffOf is candidate − baseline of two figures; a side that is nil counts as 0 when absent
// means "not in this box" (zeroIfAbsent), and leaves no difference otherwise.
func diffOf(cand, base *WhereFigure, candRuns, baseRuns int, zeroIfAbsent bool, unit string) *WhereDiff {
	d := &WhereDiff{N: candRuns, BaselineN: baseRuns, Unit: unit}
	switch {
	case cand != nil && base != nil:
		d.N, d.BaselineN = cand.N, base.N
		m := cand.Mean - base.Mean
		d.Mean = &m
		d.ci, d.Note = stats.DiffCI(base.sum, cand.sum, stats.DefaultConfidence)
	case !zeroIfAbsent || (cand == nil && base == nil):
		d.Note = "not stored for this cell"
		if cand != nil {
			d.Note = "not stored for the baseline"
		}
		return d
	case cand != nil:
		m := cand.Mean
		d.N, d.Mean, d.ci = cand.N, &m, cand.sum.CI95
		d.Note = "not in the baseline's box: 0 there"
	default:
		m := -base.Mean
		d.BaselineN, d.Mean = base.N, &m
		if iv := base.sum.CI95; iv.Valid {
			d.ci = stats.Interval{Lo: -iv.Hi, Hi: -iv.Lo, Valid: true}
		}
		d.Note = "not in this cell's box: 0 here"
	}
	d.CILow, d.CIHigh = bounds(d.ci)
	return d
}

// compareWhere sets w's differences from its baseline b's account and the sentence.
func compareWhere(w, b *WhereCell) {
	v := &WhereVersus{Baseline: b.Cell, baseLabel: b.label}
	v.Total = diffOf(&w.Named, &b.Named, w.Runs, b.Runs, false, unitMicrosPerOp)
	v.HostBusy = diffOf(&w.HostBusy, &b.HostBusy, w.Runs, b.Runs, false, unitMicrosPerOp)
	if w.Softirq != nil && b.Softirq != nil {
		v.Softirq = diffOf(w.Softirq, b.Softirq, w.Runs, b.Runs, false, unitMicrosPerOp)
	}
	base := map[compKey]WhereComponent{}
	for _, c := range b.Components {
		base[compKey{c.Group, c.Name}] = c
	}
	seen := map[compKey]bool{}
	for i := range w.Components {
		c := &w.Components[i]
		k := compKey{c.Group, c.Name}
		seen[k] = true
		c.Diff = componentDiff(*c, base[k], w.Runs, b.Runs)
	}
	for _, c := range b.Components {
		if k := (compKey{c.Group, c.Name}); !seen[k] {
			mine := WhereComponent{Group: c.Group, Name: c.Name}
			mine.Diff = componentDiff(mine, c, w.Runs, b.Runs)
			w.Components = append(w.Components, mine)
		}
	}
	orderComponents(w.Components)
	w.Costs = costDiffs(w.Costs, b.Costs, w.Runs, b.Runs)
	w.Events = costDiffs(w.Events, b.Events, w.Runs, b.Runs)
	v.Sentence = whereSentence(w.label, v.baseLabel, v.Total, w.Components, v.Softirq)
	w.Versus = v
}

// componentDiff is one component's difference: none where either side could not measure it.
func componentDiff(c, base WhereComponent, runs, baseRuns int) *WhereDiff {
	switch {
	case c.CPU == nil && c.NotMeasured != "":
		return &WhereDiff{N: runs, BaselineN: baseRuns, Unit: unitMicrosPerOp, Note: "not measured in this cell"}
	case base.CPU == nil && base.NotMeasured != "":
		return &WhereDiff{N: runs, BaselineN: baseRuns, Unit: unitMicrosPerOp, Note: "not measured in the baseline"}
	}
	return diffOf(c.CPU, base.CPU, runs, baseRuns, true, unitMicrosPerOp)
}

// costDiffs sets each cost's difference from the baseline's; a cost only the baseline stored
// is added without a value of its own.
func costDiffs(mine, base []WhereCost, runs, baseRuns int) []WhereCost {
	by := map[string]*WhereFigure{}
	for _, c := range base {
		by[c.What] = c.Value
	}
	seen := map[string]bool{}
	for i := range mine {
		seen[mine[i].What] = true
		mine[i].Diff = diffOf(mine[i].Value, by[mine[i].What], runs, baseRuns, false, mine[i].Value.Unit)
	}
	for _, c := range base {
		if !seen[c.What] {
			mine = append(mine, WhereCost{What: c.What, Diff: diffOf(nil, c.Value, runs, baseRuns, false, c.Value.Unit)})
		}
	}
	slices.SortFunc(mine, func(a, b WhereCost) int { return strings.Compare(a.What, b.What) })
	return mine
}
