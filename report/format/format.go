// Package format holds the number and text formats that the report's writers and the compare
// gate share, so that a figure reads the same wherever it is printed. Stored values are
// unrounded; only rendering rounds, to the precision a reader can use.
package format

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/boxbench/boxbench/stats"
)

// Cols is the width the terminal writers wrap prose at.
const Cols = 120

// VerdictEmulated replaces the verdict of a comparison with an emulated box (a VM under QEMU's
// TCG): its differences are the emulator's, not the box's.
const VerdictEmulated stats.Verdict = "emulated: no verdict"

// Group formats v rounded to an integer with thousands separators: 51830.4 → "51,830".
func Group(v float64) string {
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

// Sig3 formats a positive quantity to about three significant digits, grouping large ones:
// 4.213 → "4.21", 87.31 → "87.3", 412.7 → "413", 12873 → "12,873".
func Sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return Group(v)
}

// Signed formats a percentage with one decimal and an explicit sign: "+3.1", "-0.4", "0.0".
func Signed(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	if v > 0 && s != "0.0" {
		return "+" + s
	}
	return s
}

// OneDec formats with one decimal, "-0.0" shown as "0.0".
func OneDec(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		return "0.0"
	}
	return s
}

// PValue formats a p-value with two significant digits; tiny ones as "<0.001".
func PValue(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// Verdict is the verdict in a table cell; "no diff" says what it rules out: no difference
// larger than the detectable effect ("no diff >12%").
func Verdict(o *stats.Comparison) string {
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

// OrDash is s, or "-" for nothing.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Width is the display width of s (runes; the report uses no wide characters).
func Width(s string) int { return utf8.RuneCountInString(s) }

// Pad fills s with spaces to width w, on the left when right-aligned.
func Pad(s string, w int, right bool) string {
	n := w - Width(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

// Wrap writes text wrapped at cols, the first line after prefix, the others indented to it.
func Wrap(w io.Writer, prefix, text string, cols int) {
	indent := strings.Repeat(" ", Width(prefix))
	line := prefix
	lineHasWord := false
	for _, word := range strings.Fields(text) {
		if lineHasWord && Width(line)+1+Width(word) > cols {
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

// Interval is a valid interval as a JSON pair, nil otherwise (JSON null).
func Interval(iv stats.Interval) *[2]float64 {
	if !iv.Valid {
		return nil
	}
	return &[2]float64{iv.Lo, iv.Hi}
}

// NonNil is s, or an empty slice for nil (JSON [] rather than null).
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
