package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/stats"
)

var sweepsTmpl = sectionTemplate("sweeps")

// sweepsSection shows every sweep (report/sweep.go): in the terminal a table per curve, in
// JSON the key "sweeps" (per sweep key, one curve per combination of the other keys, with the
// points' throughput in ops/s, latency in µs and resource shares as summaries over the ok
// runs, and the saturation point; docs/report.md), on the page two charts and a table per
// sweep, and as the CSV form sweep-csv one row per point (sweep_csv.go). Its model is the
// report's sweeps, which Build computes (sweep.go).
type sweepsSection struct{ sweeps []*Sweep }

// sweepsBuilder computes the sweeps section (its place: sectionBuilders, report/section.go).
var sweepsBuilder builder = func(r *Report) (Section, error) { return sweepsSection{r.Sweeps}, nil }

func (sweepsSection) Head() Head { return Head{Anchor: "sweeps", Title: "Sweeps", Nav: true} }

func (s sweepsSection) Text(w io.Writer) { writeTextSweeps(w, s.sweeps) }

func (s sweepsSection) JSON() (string, any) {
	if len(s.sweeps) == 0 {
		return "", nil
	}
	return "sweeps", s.sweeps
}

func (s sweepsSection) HTML() (template.HTML, error) {
	if len(s.sweeps) == 0 {
		return "", nil
	}
	return renderHTML(sweepsTmpl, struct{ Sweeps []sweepView }{sweepViews(s.sweeps)})
}

func (s sweepsSection) CSV() []CSVForm {
	return []CSVForm{{Name: CSVSweep, Write: func(w io.Writer) error { return writeSweepCSV(w, s.sweeps) }}}
}

// writeTextSweeps prints each sweep's curves as tables, with the saturation point and the
// resource telemetry saw saturated there.
func writeTextSweeps(w io.Writer, sweeps []*Sweep) {
	for _, sw := range sweeps {
		what := "the swept value"
		if sw.Offered {
			what = "offered load, ops/s"
		}
		fmt.Fprintf(w, "\nsweep %s (%s): per point, throughput in ops/s and latency p50/p99 in µs over every operation type,\n"+
			"each the mean of the ok runs' values ± the 95 %% CI half-width (n = ok runs); \"corrected\" counts from each\n"+
			"operation's intended start (coordinated omission corrected), \"service\" from its send; \"busiest\" is the\n"+
			"resource with the highest share of its capacity over the measured window. Saturation rule: docs/report.md.\n", sw.Key, what)
		for _, cv := range sw.Curves {
			fmt.Fprintf(w, "  %s\n", format.OrDash(cv.Label))
			head := []string{strings.ToUpper(shortKey(sw.Key)), "N", "THROUGHPUT", "p50 corrected", "p99 corrected", "p50 service", "p99 service", "busiest", ""}
			rows := [][]string{head}
			for i, p := range cv.Points {
				mark := ""
				if s := cv.Saturation; s != nil && i == s.Index {
					mark = "<- saturation point"
				} else if s != nil && i > s.Index {
					mark = "saturated"
				}
				rows = append(rows, []string{trimZeros(format.Sig3(p.X)), fmt.Sprint(p.Throughput.N), pm(p.Throughput, format.Group),
					pm(p.P50, format.Sig3), pm(p.P99, format.Sig3), pm(p.ServiceP50, format.Sig3), pm(p.ServiceP99, format.Sig3), busiest(p.Resources), mark})
			}
			writeAligned(w, "    ", rows, map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 6: true})
			format.Wrap(w, "    ", satSentence(sw, cv), 118)
		}
	}
}

// shortKey is the last segment of a sweep key: targetRate, threads, records.
func shortKey(k string) string { return k[strings.LastIndex(k, ".")+1:] }

// pm formats a summary as "mean ± half-width", or the lone value, or "-".
func pm(s stats.Summary, format func(float64) string) string {
	switch {
	case s.N == 0:
		return "-"
	case !s.CI95.Valid:
		return format(s.Mean)
	}
	return format(s.Mean) + " ± " + format(s.CI95.HalfWidth())
}

func busiest(rs []ResourceUse) string {
	best := -1
	for i, r := range rs {
		if best < 0 || r.Share.Mean > rs[best].Share.Mean {
			best = i
		}
	}
	if best < 0 {
		return "-"
	}
	return fmt.Sprintf("%s %.0f %%", rs[best].Name, 100*rs[best].Share.Mean)
}

// writeAligned prints rows as columns (right-aligned where right says so).
func writeAligned(w io.Writer, indent string, rows [][]string, right map[int]bool) {
	widths := map[int]int{}
	for _, row := range rows {
		for i, s := range row {
			widths[i] = max(widths[i], format.Width(s))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, s := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(format.Pad(s, widths[i], right[i]))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// sweepView is one sweep on the HTML page: two charts, a table of points and the saturation
// sentences.
type sweepView struct {
	Key, What   string
	Plots       []spectrumPlot
	Rows        []sweepRow
	Saturations []string
}

type sweepRow struct {
	Curve, X, N, Thr, P50, P99, S50, S99, Busiest, Mark string
	First                                               bool
	Span                                                int
}

// sweepViews draws every sweep: throughput against the key, and latency against throughput
// with the corrected and the service series apart.
func sweepViews(sweeps []*Sweep) []sweepView {
	var out []sweepView
	col := &colors{}
	for _, sw := range sweeps {
		sv := sweepView{Key: sw.Key, What: "the swept value"}
		if sw.Offered {
			sv.What = "offered load, ops/s"
		}
		var legend []legendItem
		for _, cv := range sw.Curves {
			c := col.of(cv.Label)
			detail := cv.Note
			if s := cv.Saturation; s != nil {
				detail = fmt.Sprintf("saturates at %s = %s", shortKey(sw.Key), trimZeros(format.Sig3(s.X)))
				if s.Bottleneck != "" {
					detail += " · " + s.Bottleneck
				}
			}
			legend = append(legend, legendItem{Label: format.OrDash(cv.Label), Color: c, Detail: detail})
		}
		sv.Plots = append(sv.Plots,
			spectrumPlot{Title: "throughput against " + shortKey(sw.Key), SVG: template.HTML(throughputChart(sw, col)), Legend: legend},
			spectrumPlot{Title: "latency against throughput (solid: corrected, dashed: service time; thick: p99, thin: p50)",
				SVG: template.HTML(latencyChart(sw, col)), Legend: legend})
		for _, cv := range sw.Curves {
			for i, p := range cv.Points {
				mark := ""
				if s := cv.Saturation; s != nil && i == s.Index {
					mark = "saturation point"
				} else if s != nil && i > s.Index {
					mark = "saturated"
				}
				sv.Rows = append(sv.Rows, sweepRow{Curve: format.OrDash(cv.Label), X: trimZeros(format.Sig3(p.X)), N: fmt.Sprint(p.Throughput.N),
					Thr: pm(p.Throughput, format.Group), P50: pm(p.P50, format.Sig3), P99: pm(p.P99, format.Sig3), S50: pm(p.ServiceP50, format.Sig3),
					S99: pm(p.ServiceP99, format.Sig3), Busiest: busiest(p.Resources), Mark: mark, First: i == 0, Span: len(cv.Points)})
			}
			sv.Saturations = append(sv.Saturations, format.OrDash(cv.Label)+": "+satSentence(sw, cv))
		}
		out = append(out, sv)
	}
	return out
}
