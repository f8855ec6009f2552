package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/report/format"
)

// A small SVG plotting kit: the report's charts are few and simple, and drawing them by hand
// keeps the page self-contained, small, deterministic and styled by the page's own CSS.
// Elements that show data carry the class "mark"; the page's script checks every chart has
// some (an empty chart is a bug).

// xy is one data point.
type xy struct{ X, Y float64 }

// scale maps a data interval onto a pixel interval, linearly or on log10.
type scale struct {
	d0, d1 float64 // domain
	r0, r1 float64 // range, pixels
	log    bool
}

func (s scale) at(v float64) float64 {
	a, b, x := s.d0, s.d1, v
	if s.log {
		a, b, x = math.Log10(a), math.Log10(b), math.Log10(math.Max(v, s.d0/10))
	}
	if b == a {
		return (s.r0 + s.r1) / 2
	}
	return s.r0 + (x-a)/(b-a)*(s.r1-s.r0)
}

// maxTicks bounds the ticks of an axis (a readable axis has about ten).
const maxTicks = 400

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// tick is an axis position and its label.
type tick struct {
	V     float64
	Label string
}

// niceStep returns a 1, 2 or 5 × 10^k step giving about n intervals over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// linearTicks extends [lo, hi] to whole steps and returns the new domain and its ticks.
// A domain that is not finite (a results file's NaN or Inf that reached a chart) becomes
// [0, 1], and at most maxTicks ticks are made: 1e308 plus a step is 1e308, and a loop sized by
// a value must not be (work is bounded whatever the values).
func linearTicks(lo, hi float64, n int, format func(float64) string) (float64, float64, []tick) {
	if !finite(lo) || !finite(hi) || !finite(hi-lo) {
		lo, hi = 0, 1
	}
	if hi <= lo {
		if lo == 0 {
			hi = 1
		} else {
			lo, hi = lo-math.Abs(lo)*0.1, hi+math.Abs(hi)*0.1
		}
	}
	step := niceStep(hi-lo, n)
	lo = math.Floor(lo/step+1e-9) * step
	hi = math.Ceil(hi/step-1e-9) * step
	var ts []tick
	for i := 0; i < maxTicks; i++ {
		v := lo + float64(i)*step
		if v > hi+step/2 {
			break
		}
		if math.Abs(v) < step/1e6 {
			v = 0
		}
		ts = append(ts, tick{v, format(v)})
	}
	return lo, hi, ts
}

// logTicks returns the domain [lo, hi] widened to 1-2-5 values and ticks at them.
func logTicks(lo, hi float64) (float64, float64, []tick) {
	if !finite(lo) || !finite(hi) {
		lo, hi = 1, 10
	}
	lo, hi = math.Max(lo, 1e-3), math.Max(hi, 1e-3)
	if hi <= lo {
		hi = lo * 10
	}
	steps := []float64{1, 2, 5}
	floor := func(v float64) float64 {
		m := math.Pow(10, math.Floor(math.Log10(v)))
		for i := len(steps) - 1; i >= 0; i-- {
			if steps[i]*m <= v*(1+1e-9) {
				return steps[i] * m
			}
		}
		return m
	}
	ceil := func(v float64) float64 {
		m := math.Pow(10, math.Floor(math.Log10(v)))
		for _, s := range append(steps, 10) {
			if s*m >= v*(1-1e-9) {
				return s * m
			}
		}
		return 10 * m
	}
	lo, hi = floor(lo), ceil(hi)
	var ts []tick
	decades := math.Log10(hi / lo)
	for m := math.Pow(10, math.Floor(math.Log10(lo))); m <= hi*(1+1e-9) && len(ts) < maxTicks; m *= 10 {
		for _, s := range steps {
			v := s * m
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			if decades > 2.5 && s != 1 { // keep labels apart on wide ranges
				continue
			}
			ts = append(ts, tick{v, trimZeros(format.Sig3(v))})
		}
	}
	return lo, hi, ts
}

// plot is one chart: a plotting area inside margins, and the SVG being written.
type plot struct {
	w, h                     float64
	left, right, top, bottom float64
	x, y                     scale
	b                        strings.Builder
	class                    string
	name                     string
}

func newPlot(name, class string, w, h, left, right, top, bottom float64) *plot {
	return &plot{w: w, h: h, left: left, right: right, top: top, bottom: bottom, class: class, name: name}
}

func (p *plot) setX(d0, d1 float64, log bool) {
	p.x = scale{d0: d0, d1: d1, r0: p.left, r1: p.w - p.right, log: log}
}

func (p *plot) setY(d0, d1 float64, log bool) {
	p.y = scale{d0: d0, d1: d1, r0: p.h - p.bottom, r1: p.top, log: log}
}

// f formats a coordinate.
func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }

func (p *plot) raw(format string, a ...any) { fmt.Fprintf(&p.b, format, a...) }

// axes draws grid lines and tick labels for both axes.
func (p *plot) axes(xt, yt []tick) {
	x0, x1 := p.left, p.w-p.right
	y0, y1 := p.h-p.bottom, p.top
	p.raw(`<g class="grid">`)
	for _, t := range yt {
		y := p.y.at(t.V)
		p.raw(`<line x1="%s" x2="%s" y1="%s" y2="%s"/>`, f(x0), f(x1), f(y), f(y))
	}
	for _, t := range xt {
		x := p.x.at(t.V)
		p.raw(`<line x1="%s" x2="%s" y1="%s" y2="%s"/>`, f(x), f(x), f(y0), f(y1))
	}
	p.raw(`</g><g class="axis">`)
	p.raw(`<line x1="%s" x2="%s" y1="%s" y2="%s"/>`, f(x0), f(x1), f(y0), f(y0))
	p.raw(`<line x1="%s" x2="%s" y1="%s" y2="%s"/>`, f(x0), f(x0), f(y0), f(y1))
	for _, t := range yt {
		p.raw(`<text x="%s" y="%s" text-anchor="end" dy="0.32em">%s</text>`, f(x0-4), f(p.y.at(t.V)), esc(t.Label))
	}
	for _, t := range xt {
		p.raw(`<text x="%s" y="%s" text-anchor="middle" dy="0.71em">%s</text>`, f(p.x.at(t.V)), f(y0+4), esc(t.Label))
	}
	p.raw(`</g>`)
}

// axisLabels writes the axis titles (with units).
func (p *plot) axisLabels(xl, yl string) {
	if xl != "" {
		p.raw(`<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, f((p.left+p.w-p.right)/2), f(p.h-4), esc(xl))
	}
	if yl != "" {
		cy := (p.top + p.h - p.bottom) / 2
		p.raw(`<text class="label" transform="translate(12 %s) rotate(-90)" text-anchor="middle">%s</text>`, f(cy), esc(yl))
	}
}

// band shades [x0, x1] of the plotting area (warm-up).
func (p *plot) band(x0, x1 float64, text string) {
	a, b := p.x.at(x0), p.x.at(x1)
	if b <= a {
		return
	}
	p.raw(`<g class="band"><rect x="%s" y="%s" width="%s" height="%s"/>`, f(a), f(p.top), f(b-a), f(p.h-p.bottom-p.top))
	if text != "" && b-a > 30 {
		p.raw(`<text x="%s" y="%s" text-anchor="middle" dy="0.9em">%s</text>`, f((a+b)/2), f(p.top), esc(text))
	}
	p.raw(`</g>`)
}

// line draws a polyline through pts (a dot when there is one point).
func (p *plot) line(pts []xy, color, class, title string) {
	if len(pts) == 0 {
		return
	}
	if len(pts) == 1 {
		p.raw(`<circle class="mark %s" cx="%s" cy="%s" r="2.5" fill="%s"><title>%s</title></circle>`, class,
			f(p.x.at(pts[0].X)), f(p.y.at(pts[0].Y)), color, esc(title))
		return
	}
	var d strings.Builder
	for i, pt := range pts {
		if i == 0 {
			d.WriteString("M")
		} else {
			d.WriteString("L")
		}
		d.WriteString(f(p.x.at(pt.X)) + " " + f(p.y.at(pt.Y)))
	}
	p.raw(`<path class="mark %s" d="%s" stroke="%s"><title>%s</title></path>`, class, d.String(), color, esc(title))
}

// svg returns the finished chart.
func (p *plot) svg(desc string) string {
	return fmt.Sprintf(`<svg class="chart %s" data-chart="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">%s</svg>`,
		p.class, esc(p.name), f(p.w), f(p.h), f(p.w), f(p.h), esc(desc), p.b.String())
}
