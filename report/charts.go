package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/boxbench/boxbench/report/format"
)

// Colours: Okabe–Ito (distinguishable with the common colour-vision deficiencies), without
// its yellow, which vanishes on white.
var palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c564b", "#7f7f7f"}

const (
	baselineColor = "#1b1b1b"
	slowerColor   = "#d55e00"
	fasterColor   = "#009e73"
	noDiffColor   = "#9aa3ad"
)

// colors gives every cell label one colour across all charts.
type colors struct {
	byLabel map[string]string
}

func (c *colors) of(label string) string {
	if c.byLabel == nil {
		c.byLabel = map[string]string{}
	}
	if col, ok := c.byLabel[label]; ok {
		return col
	}
	col := palette[len(c.byLabel)%len(palette)]
	c.byLabel[label] = col
	return col
}

// forest is the shared x scale of the overhead bars: overhead in %, positive = slower.
type forest struct {
	w, h  float64
	x     scale
	ticks []tick
}

const (
	forestW = 270
	forestH = 26
)

// newForest fits the scale to every bar and CI; ok is false when no cell has an overhead.
func newForest(r *Report) (*forest, bool) {
	lo, hi, any := 0.0, 0.0, false
	for _, c := range r.Cells {
		if o := c.Overhead; o != nil {
			any = true
			lo, hi = math.Min(lo, o.OverheadPct), math.Max(hi, o.OverheadPct)
			if o.OverheadPctCI.Valid {
				lo, hi = math.Min(lo, o.OverheadPctCI.Lo), math.Max(hi, o.OverheadPctCI.Hi)
			}
		}
	}
	if !any {
		return nil, false
	}
	lo, hi, ticks := linearTicks(lo, hi, 5, func(v float64) string { return signedInt(v) })
	fo := &forest{w: forestW, h: forestH, ticks: ticks}
	fo.x = scale{d0: lo, d1: hi, r0: 14, r1: forestW - 14}
	return fo, true
}

func signedInt(v float64) string {
	s := trimZeros(fmt.Sprintf("%.1f", v))
	if v > 0 {
		return "+" + s
	}
	return s
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

func (fo *forest) grid(b *strings.Builder, top, bottom float64) {
	for _, t := range fo.ticks {
		cls := "fgrid"
		if t.V == 0 {
			cls = "fzero"
		}
		fmt.Fprintf(b, `<line class="%s" x1="%s" x2="%s" y1="%s" y2="%s"/>`, cls, f(fo.x.at(t.V)), f(fo.x.at(t.V)), f(top), f(bottom))
	}
}

// axis is the header of the bar column: tick labels and which side is slower.
func (fo *forest) axis() string {
	var b strings.Builder
	h := 40.0
	fmt.Fprintf(&b, `<svg class="faxis" viewBox="0 0 %s %s" width="%s" height="%s" aria-hidden="true">`, f(fo.w), f(h), f(fo.w), f(h))
	x0 := fo.x.at(0)
	fmt.Fprintf(&b, `<text class="dir" x="%s" y="11" text-anchor="end">◀ faster</text>`, f(x0-4))
	fmt.Fprintf(&b, `<text class="dir" x="%s" y="11">slower ▶</text>`, f(x0+4))
	for _, t := range fo.ticks {
		fmt.Fprintf(&b, `<text x="%s" y="30" text-anchor="middle">%s</text>`, f(fo.x.at(t.V)), esc(t.Label))
		fmt.Fprintf(&b, `<line class="fgrid" x1="%s" x2="%s" y1="34" y2="40"/>`, f(fo.x.at(t.V)), f(fo.x.at(t.V)))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// bar draws one cell's overhead: a bar to the estimate and a whisker over the CI; a diamond
// at zero for a baseline.
func (fo *forest) bar(c *Cell, title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="fbar" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		f(fo.w), f(fo.h), f(fo.w), f(fo.h), esc(title))
	fo.grid(&b, 0, fo.h)
	mid := fo.h / 2
	switch o := c.Overhead; {
	case c.IsBaseline() && c.Runs > 0:
		x := fo.x.at(0)
		fmt.Fprintf(&b, `<path class="mark" d="M%s %sl5 5l-5 5l-5 -5z" fill="%s"><title>%s</title></path>`,
			f(x), f(mid-5), baselineColor, esc(title))
	case o != nil:
		col := verdictColor(string(o.Verdict))
		x0, x1 := fo.x.at(0), fo.x.at(o.OverheadPct)
		cls := "mark"
		if o.Underpowered {
			cls = "mark weak"
		}
		fmt.Fprintf(&b, `<rect class="%s" x="%s" y="%s" width="%s" height="10" fill="%s"><title>%s</title></rect>`,
			cls, f(math.Min(x0, x1)), f(mid-5), f(math.Max(math.Abs(x1-x0), 1)), col, esc(title))
		if ci := o.OverheadPctCI; ci.Valid {
			a, z := fo.x.at(ci.Lo), fo.x.at(ci.Hi)
			fmt.Fprintf(&b, `<path class="mark whisker" d="M%s %sH%sM%s %sV%sM%s %sV%s"><title>95 %% CI %s … %s %%</title></path>`,
				f(a), f(mid), f(z), f(a), f(mid-5), f(mid+5), f(z), f(mid-5), f(mid+5), format.OneDec(ci.Lo), format.OneDec(ci.Hi))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func verdictColor(v string) string {
	switch v {
	case "slower":
		return slowerColor
	case "faster":
		return fasterColor
	}
	return noDiffColor
}

// spectrumLine is one cell's line in a latency spectrum.
type spectrumLine struct {
	Label    string
	Color    string
	Baseline bool
	Points   []Quantile
	Count    int64
}

// spectrumChart plots latency against percentile on a nines axis, log latency.
func spectrumChart(name string, lines []spectrumLine) string {
	p := newPlot(name, "spectrum", 560, 300, 58, 14, 10, 40)
	top, lo, hi := 0.0, math.Inf(1), 0.0
	for _, l := range lines {
		for _, q := range l.Points {
			top = math.Max(top, nines(q.Percentile))
			if q.Micros > 0 {
				lo = math.Min(lo, q.Micros)
			}
			hi = math.Max(hi, q.Micros)
		}
	}
	top = math.Max(1, math.Ceil(top-1e-9))
	p.setX(0, top, false)
	ylo, yhi, yt := logTicks(lo, hi)
	p.setY(ylo, yhi, true)
	var xt []tick
	for i := 0.0; i <= top+1e-9; i++ {
		xt = append(xt, tick{i, ninesLabel(i)})
	}
	p.axes(xt, yt)
	p.axisLabels("percentile (%), nines scale", "latency (µs), log scale")
	// Baseline last so it is drawn on top.
	for _, pass := range []bool{false, true} {
		for _, l := range lines {
			if l.Baseline != pass {
				continue
			}
			pts := make([]xy, 0, len(l.Points))
			for _, q := range l.Points {
				pts = append(pts, xy{nines(q.Percentile), math.Max(q.Micros, ylo)})
			}
			cls := "sline"
			if l.Baseline {
				cls = "sline base"
			}
			p.line(pts, l.Color, cls, fmt.Sprintf("%s (n = %s ops)", l.Label, format.Group(float64(l.Count))))
		}
	}
	return p.svg("latency spectrum " + name)
}

func ninesLabel(x float64) string {
	if x == 0 {
		return "0"
	}
	return trimZeros(fmt.Sprintf("%.*f", max(0, int(x)-2), percentileOfNines(x)))
}
