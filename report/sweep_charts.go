package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/stats"
)

// axisScale picks a log axis when the values span a decade or more.
func axisScale(lo, hi float64, n int, format func(float64) string) (float64, float64, []tick, bool) {
	if lo > 0 && hi/lo >= 10 {
		a, b, t := logTicks(lo, hi)
		return a, b, t, true
	}
	a, b, t := linearTicks(math.Min(0, lo), hi, n, format)
	return a, b, t, false
}

func throughputChart(sw *Sweep, col *colors) string {
	p := newPlot("throughput "+sw.Key, "sweep", 560, 300, 64, 24, 10, 40)
	xlo, xhi, ylo, yhi := math.Inf(1), 0.0, math.Inf(1), 0.0
	for _, cv := range sw.Curves {
		for _, pt := range cv.Points {
			xlo, xhi = math.Min(xlo, pt.X), math.Max(xhi, pt.X)
			if pt.Throughput.N > 0 {
				ylo, yhi = math.Min(ylo, lowOf(pt.Throughput)), math.Max(yhi, highOf(pt.Throughput))
			}
		}
	}
	if sw.Offered {
		ylo, yhi = math.Min(ylo, xlo), math.Max(yhi, xhi)
	}
	x0, x1, xt, xlog := axisScale(xlo, xhi, 6, trimGroup)
	y0, y1, yt, ylog := axisScale(math.Max(ylo, 1e-3), yhi, 5, trimGroup)
	p.setX(x0, x1, xlog)
	p.setY(y0, y1, ylog)
	p.axes(xt, yt)
	xl := shortKey(sw.Key)
	if sw.Offered {
		xl = "offered load (ops/s)"
		p.line([]xy{{xlo, xlo}, {xhi, xhi}}, noDiffColor, "ideal", "throughput = offered load")
	}
	p.axisLabels(xl, "throughput (ops/s), mean ± 95 % CI")
	for _, cv := range sw.Curves {
		c := col.of(cv.Label)
		var pts []xy
		for _, pt := range cv.Points {
			if pt.Throughput.N == 0 {
				continue
			}
			pts = append(pts, xy{pt.X, pt.Throughput.Mean})
			errorBar(p, pt.X, pt.Throughput, c, fmt.Sprintf("%s, %s = %s: %s ops/s (n = %d)", format.OrDash(cv.Label), shortKey(sw.Key),
				trimZeros(format.Sig3(pt.X)), pm(pt.Throughput, format.Group), pt.Throughput.N))
		}
		p.line(pts, c, "sline", format.OrDash(cv.Label)+": throughput")
		if s := cv.Saturation; s != nil {
			satMark(p, s.X, s.Throughput, c, fmt.Sprintf("%s: saturation point at %s (%s)", format.OrDash(cv.Label), trimZeros(format.Sig3(s.X)), format.OrDash(s.Bottleneck)))
		}
	}
	return p.svg("throughput against " + sw.Key)
}

func latencyChart(sw *Sweep, col *colors) string {
	p := newPlot("latency "+sw.Key, "sweep", 560, 300, 78, 24, 10, 40)
	xlo, xhi, ylo, yhi := math.Inf(1), 0.0, math.Inf(1), 0.0
	for _, cv := range sw.Curves {
		for _, pt := range cv.Points {
			if pt.Throughput.N == 0 {
				continue
			}
			xlo, xhi = math.Min(xlo, pt.Throughput.Mean), math.Max(xhi, pt.Throughput.Mean)
			for _, s := range []struct{ a, b float64 }{{pt.P50.Mean, highOf(pt.P99)}, {pt.ServiceP50.Mean, highOf(pt.ServiceP99)}} {
				if s.a > 0 {
					ylo = math.Min(ylo, s.a)
				}
				yhi = math.Max(yhi, s.b)
			}
		}
	}
	x0, x1, xt, _ := axisScale(0, xhi, 6, trimGroup)
	y0, y1, yt := logTicks(ylo, yhi)
	p.setX(x0, x1, false)
	p.setY(y0, y1, true)
	p.axes(xt, yt)
	p.axisLabels("throughput (ops/s)", "latency (µs), log scale")
	for _, cv := range sw.Curves {
		c := col.of(cv.Label)
		series := []struct {
			cls, name string
			get       func(*CurvePoint) (float64, float64, bool)
		}{
			{"sline p50", "p50 corrected", func(pt *CurvePoint) (float64, float64, bool) { return pt.P50.Mean, 0, pt.P50.N > 0 }},
			{"sline svc p50", "p50 service", func(pt *CurvePoint) (float64, float64, bool) { return pt.ServiceP50.Mean, 0, pt.ServiceP50.N > 0 }},
			{"sline svc", "p99 service", func(pt *CurvePoint) (float64, float64, bool) { return pt.ServiceP99.Mean, 0, pt.ServiceP99.N > 0 }},
			{"sline", "p99 corrected", func(pt *CurvePoint) (float64, float64, bool) { return pt.P99.Mean, 0, pt.P99.N > 0 }},
		}
		for _, s := range series {
			var pts []xy
			for _, pt := range cv.Points {
				if y, _, ok := s.get(pt); ok && pt.Throughput.N > 0 {
					pts = append(pts, xy{pt.Throughput.Mean, math.Max(y, y0)})
				}
			}
			p.line(pts, c, s.cls, format.OrDash(cv.Label)+": "+s.name)
		}
		for _, pt := range cv.Points {
			if pt.Throughput.N > 0 && pt.P99.N > 0 {
				errorBar(p, pt.Throughput.Mean, pt.P99, c, fmt.Sprintf("%s at %s = %s: p99 corrected %s µs, service %s µs (n = %d)",
					format.OrDash(cv.Label), shortKey(sw.Key), trimZeros(format.Sig3(pt.X)), pm(pt.P99, format.Sig3), pm(pt.ServiceP99, format.Sig3), pt.P99.N))
			}
		}
		if s := cv.Saturation; s != nil {
			satMark(p, s.Throughput, s.P99, c, fmt.Sprintf("%s: saturation point at %s (%s)", format.OrDash(cv.Label), trimZeros(format.Sig3(s.X)), format.OrDash(s.Bottleneck)))
		}
	}
	return p.svg("latency against throughput, " + sw.Key)
}

// errorBar draws the 95 % CI of s at x (nothing when there is no interval).
func errorBar(p *plot, x float64, s stats.Summary, color, title string) {
	if !s.CI95.Valid {
		p.raw(`<circle class="mark pt" cx="%s" cy="%s" r="2.5" fill="%s"><title>%s</title></circle>`, f(p.x.at(x)), f(p.y.at(s.Mean)), color, esc(title))
		return
	}
	lo := math.Max(s.CI95.Lo, p.y.d0)
	hi := math.Min(s.CI95.Hi, p.y.d1)
	px := p.x.at(x)
	p.raw(`<g class="ebar"><line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s"/><circle class="mark pt" cx="%s" cy="%s" r="2.5" fill="%s"><title>%s</title></circle></g>`,
		f(px), f(px), f(p.y.at(lo)), f(p.y.at(hi)), color, f(px), f(p.y.at(s.Mean)), color, esc(title))
}

// satMark rings a curve's saturation point.
func satMark(p *plot, x, y float64, color, title string) {
	p.raw(`<circle class="mark sat" cx="%s" cy="%s" r="6" stroke="%s"><title>%s</title></circle>`, f(p.x.at(x)), f(p.y.at(y)), color, esc(title))
}

func lowOf(s stats.Summary) float64 {
	if s.CI95.Valid && s.CI95.Lo > 0 {
		return s.CI95.Lo
	}
	return s.Mean
}

func highOf(s stats.Summary) float64 {
	if s.CI95.Valid {
		return math.Max(s.Mean, s.CI95.Hi)
	}
	return s.Mean
}

// trimGroup labels an axis tick: grouped, without trailing zeros.
func trimGroup(v float64) string { return strings.TrimSuffix(trimZeros(format.Sig3(v)), ".") }
