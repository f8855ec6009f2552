package report

import (
	"fmt"
	"github.com/boxbench/boxbench/stats"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Number formats shared by the text and HTML writers. Stored values are unrounded; only
// rendering rounds, to the precision a reader can use.

// group formats v rounded to an integer with thousands separators: 51830.4 → "51,830".
func group(v float64) string {
	neg := v < 0
	s := strconv.FormatFloat(math.Abs(math.Round(v)), 'f', 0, 64)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg && s != "0" {
		return "-" + b.String()
	}
	return b.String()
}

// sig3 formats a positive quantity to about three significant digits, grouping large ones:
// 4.213 → "4.21", 87.31 → "87.3", 412.7 → "413", 12873 → "12,873".
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return group(v)
}

// signed formats a percentage with one decimal and an explicit sign: "+3.1", "-0.4", "0.0".
func signed(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	if v > 0 && s != "0.0" {
		return "+" + s
	}
	return s
}

// oneDec formats with one decimal, "-0.0" shown as "0.0".
func oneDec(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		return "0.0"
	}
	return s
}

// pValue formats a p-value with two significant digits; tiny ones as "<0.001".
func pValue(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// verdictShort is the verdict in a table cell; "no diff" says what it rules out: no
// difference larger than the detectable effect ("no diff >12%").
func verdictShort(o *stats.Comparison) string {
	if o.Verdict == VerdictEmulated {
		return "emulated"
	}
	if o.Verdict != stats.VerdictNoDifference {
		return string(o.Verdict)
	}
	if o.MDEValid {
		return "no diff >" + strconv.FormatFloat(o.MDEPct, 'f', 0, 64) + "%"
	}
	return "no diff"
}

// width is the display width of s (runes; the report uses no wide characters).
func width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, w int, right bool) string {
	n := w - width(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

// wrap writes text wrapped at cols, the first line after prefix, the others indented to it.
func wrap(w io.Writer, prefix, text string, cols int) {
	indent := strings.Repeat(" ", width(prefix))
	line := prefix
	lineHasWord := false
	for _, word := range strings.Fields(text) {
		if lineHasWord && width(line)+1+width(word) > cols {
			fmt.Fprintln(w, line)
			line, lineHasWord = indent, false
		}
		if lineHasWord {
			line += " "
		}
		line += word
		lineHasWord = true
	}
	fmt.Fprintln(w, line)
}

// label joins the values of keys in params: "docker overlay host".
func label(params map[string]string, keys []string) string {
	var parts []string
	for _, k := range keys {
		if v := params[k]; v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " ")
}

// kvLabel joins "k=v" for keys present in params.
func kvLabel(params map[string]string, keys []string, sep string) string {
	var parts []string
	for _, k := range keys {
		if v, ok := params[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, sep)
}
