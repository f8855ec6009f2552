package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/stats"
)

// writeTextSweeps prints each sweep's curves as tables, with the saturation point and the
// resource telemetry saw saturated there.
func writeTextSweeps(w io.Writer, r *Report) {
	for _, sw := range r.Sweeps {
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
