package report

import (
	"html/template"
	"math"
	"slices"
)

// groupColors colour the components by group (the Okabe–Ito palette of charts.go).
var groupColors = map[string]string{
	"database": "#0072b2", "box": "#d55e00", "neighbour": "#cc79a7",
	"client": "#009e73", "kernel": "#e69f00", "other": "#7f7f7f",
}

const (
	unknownGroupColor = "#8c564b"
	softirqColor      = "#56b4e9"
)

// shades tell a group's components apart: the n-th of a group is drawn at shades[n].
var shades = []string{"1", "0.72", "0.5", "0.34"}

func groupColor(g string) string {
	if c, ok := groupColors[g]; ok {
		return c
	}
	return unknownGroupColor
}

type whereView struct {
	Legend []legendItem
	Cells  []whereCellView
}

type whereCellView struct {
	Label, Interrupts, Books, Softirq, Sentence string
	Compared                                    bool
	SVG                                         template.HTML
	Rows                                        []whereRowView
	Total                                       whereRowView
	Costs                                       []whereRowView
}

type whereRowView struct {
	Name, Color, Value, Diff string
}

// whereViews are the page's views of the cells: one shared scale for every bar, so that bars
// compare across cells.
func whereViews(cells []*WhereCell) whereView {
	top := 0.0
	var groups []string
	for _, c := range cells {
		top = math.Max(top, barTop(c))
		for _, comp := range c.Components {
			if !slices.Contains(groups, comp.Group) {
				groups = append(groups, comp.Group)
			}
		}
	}
	slices.SortFunc(groups, func(a, b string) int { return groupRank(a) - groupRank(b) })
	var v whereView
	for _, g := range groups {
		v.Legend = append(v.Legend, legendItem{Label: g, Color: groupColor(g)})
	}
	v.Legend = append(v.Legend, legendItem{Label: "host busy", Color: baselineColor, Detail: "the total, with its 95 % interval"},
		legendItem{Label: "soft interrupts (host-wide)", Color: softirqColor, Detail: "of which, not added on top"})
	for _, c := range cells {
		cv := whereCellView{Label: c.label, Interrupts: interruptFactText(c.Interrupts), Compared: c.Versus != nil,
			SVG: template.HTML(whereBar(c, top))}
		cv.Books = booksText(c)
		for _, comp := range c.Components {
			cv.Rows = append(cv.Rows, whereRowView{Name: componentName(comp), Color: groupColor(comp.Group),
				Value: componentValue(comp), Diff: diffText(comp.Diff)})
		}
		cv.Total = whereRowView{Name: "host busy (the total)", Value: figureText(&c.HostBusy)}
		if c.Versus != nil {
			cv.Total.Diff, cv.Sentence = diffText(c.Versus.Total), c.Versus.Sentence
		}
		if c.VersusNote != "" {
			cv.Sentence = c.VersusNote
		}
		if c.Softirq != nil {
			cv.Softirq = softirqText(c)
		}
		for _, k := range append(slices.Clone(c.Events), c.Costs...) {
			cv.Costs = append(cv.Costs, whereRowView{Name: k.What, Value: unitText(k.Value), Diff: diffText(k.Diff)})
		}
		v.Cells = append(v.Cells, cv)
	}
	return v
}

// barTop is how far a cell's bar reaches: its positive components stacked, its host busy
// and interval, its soft interrupts.
func barTop(c *WhereCell) float64 {
	stack := 0.0
	for _, comp := range c.Components {
		if comp.CPU != nil && comp.CPU.Mean > 0 {
			stack += comp.CPU.Mean
		}
	}
	top := math.Max(stack, c.HostBusy.Mean)
	if c.HostBusy.CIHigh != nil {
		top = math.Max(top, *c.HostBusy.CIHigh)
	}
	if c.Softirq != nil {
		top = math.Max(top, c.Softirq.Mean)
	}
	return top
}

// whereBar draws one cell's stacked bar on the shared scale [0, top]: a segment per
// component with a positive mean (a negative figure, sampling error of tick accounting, is in
// the table only), the host's busy CPU as a line with its interval, and the host-wide soft
// interrupts as a thin bar beneath ("of which", not added).
func whereBar(c *WhereCell, top float64) string {
	p := newPlot(c.Cell, "wherebar", 640, 62, 14, 14, 6, 24)
	lo, hi, ticks := linearTicks(0, top, 6, func(v float64) string { return trimZeros(num3(v)) })
	p.setX(lo, hi, false)
	p.setY(0, 1, false)
	p.axes(ticks, nil)
	x, shade := 0.0, map[string]int{}
	for _, comp := range c.Components {
		if comp.CPU == nil {
			continue
		}
		n := shade[comp.Group]
		shade[comp.Group]++
		if comp.CPU.Mean <= 0 {
			continue
		}
		a, b := p.x.at(x), p.x.at(x+comp.CPU.Mean)
		p.raw(`<rect class="mark" x="%s" y="8" width="%s" height="16" fill="%s" fill-opacity="%s" stroke="#fff" stroke-width="0.6"><title>%s: %s µs/op</title></rect>`,
			f(a), f(math.Max(b-a, 0.5)), groupColor(comp.Group), shades[n%len(shades)], esc(componentName(comp)), esc(figureText(comp.CPU)))
		x += comp.CPU.Mean
	}
	if s := c.Softirq; s != nil && s.Mean > 0 {
		p.raw(`<rect class="mark" x="%s" y="26" width="%s" height="4" fill="%s"><title>of which in soft interrupts (host-wide): %s µs/op</title></rect>`,
			f(p.x.at(0)), f(math.Max(p.x.at(s.Mean)-p.x.at(0), 0.5)), softirqColor, esc(figureText(s)))
	}
	hb := c.HostBusy
	xb := p.x.at(hb.Mean)
	p.raw(`<path class="mark" d="M%s 4V32" stroke="%s" stroke-width="2"><title>host busy: %s µs/op</title></path>`,
		f(xb), baselineColor, esc(figureText(&hb)))
	if hb.CILow != nil && hb.CIHigh != nil {
		a, b := p.x.at(*hb.CILow), p.x.at(*hb.CIHigh)
		p.raw(`<path class="mark" d="M%s 16H%sM%s 12V20M%s 12V20" stroke="%s"><title>host busy 95 %% CI %s</title></path>`,
			f(a), f(b), f(a), f(b), baselineColor, esc(ciText(hb.CILow, hb.CIHigh, false)))
	}
	p.axisLabels("CPU µs per operation", "")
	return p.svg("where the time goes " + c.Cell)
}
