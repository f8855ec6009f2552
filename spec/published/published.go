// Package published holds what a published study found, as data kept in the experiment that
// reproduces it (the spec's published: block): the value types and their own rules. It is a
// leaf below spec, which decodes and checks the block, and below study, which judges each
// finding against this host's estimate (study.Judge).
//
// A finding is an effect on throughput: the cost of the cells it selects relative to a
// baseline, in percent of the baseline's throughput, positive = slower — the unit of every
// overhead boxbench reports (report/report.go), so a published figure and this host's estimate
// are read on one scale. A figure nobody can trace is worse than none: an effect whose size the
// source does not state keeps Overhead nil and is judged on its direction alone.
package published

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Published is a study and the effects it reports.
type Published struct {
	// Study cites it: authors, title, venue, year.
	Study string `yaml:"study" json:"study"`
	// Where is where it can be read (a DOI or the post's address).
	Where string `yaml:"where" json:"where,omitempty"`
	// Effects are its findings, in the order the report shows them.
	Effects []Effect `yaml:"effects" json:"effects"`
}

// Directions an effect can have: the selected cells are slower than their baseline, faster, or
// the study found no measurable difference.
const (
	Slower = "slower"
	Faster = "faster"
	None   = "none"
)

// Directions are the valid values of Effect.Direction.
var Directions = []string{Slower, Faster, None}

// Effect is one published finding.
type Effect struct {
	// Name identifies the effect in the report (a short slug).
	Name string `yaml:"name" json:"name"`
	// Claim says the finding in words, as the study put it.
	Claim string `yaml:"claim" json:"claim"`
	// Cells selects the cells of the experiment that measure it: matrix key → value; every
	// runnable cell with all of these values is one comparison (one row of the report).
	Cells map[string]string `yaml:"cells" json:"cells"`
	// Baseline, when set, replaces these keys of each selected cell to find the cell it is
	// compared with (e.g. {network: host} compares a bridge cell with the host-network cell of
	// the same other keys); empty compares each cell with its baseline in the experiment.
	Baseline map[string]string `yaml:"baseline" json:"baseline,omitempty"`
	// Direction is Slower, Faster or None.
	Direction string `yaml:"direction" json:"direction"`
	// Overhead is the published size: the selected cells' throughput cost in percent of the
	// baseline (positive = slower); nil when the source gives only the direction.
	Overhead *float64 `yaml:"overhead" json:"overhead"`
	// Range is the spread the study gave around Overhead as [low, high] in the same unit
	// (runs' minimum and maximum, an interval, "up to"); nil when it gave none.
	Range []float64 `yaml:"range" json:"range,omitempty"`
	// Source is where in the study the figure is: a table, figure or section; or, for a
	// direction without a size, where the direction is recorded.
	Source string `yaml:"source" json:"source"`
	// NotComparable, when set, says why this host's estimate does not measure what the study
	// measured (the row is shown, and judged "not comparable").
	NotComparable string `yaml:"notComparable" json:"not_comparable,omitempty"`
}

// Validate returns every problem of p, each "field: message" with the field relative to the
// published block (effects[2].direction); nil when p is nil or valid.
func (p *Published) Validate() []string {
	if p == nil {
		return nil
	}
	var out []string
	add := func(field, format string, a ...any) { out = append(out, field+": "+fmt.Sprintf(format, a...)) }
	if strings.TrimSpace(p.Study) == "" {
		add("study", "missing: cite the study (authors, title, venue, year)")
	}
	if len(p.Effects) == 0 {
		add("effects", "missing: list at least one published effect")
	}
	out = append(out, printable("study", p.Study)...)
	out = append(out, printable("where", p.Where)...)
	seen := map[string]bool{}
	for i, e := range p.Effects {
		f := fmt.Sprintf("effects[%d]", i)
		for _, t := range [][2]string{{"name", e.Name}, {"claim", e.Claim}, {"source", e.Source}, {"notComparable", e.NotComparable}} {
			out = append(out, printable(f+"."+t[0], t[1])...)
		}
		for k, v := range e.Cells {
			out = append(out, printable(f+".cells", k+v)...)
		}
		for k, v := range e.Baseline {
			out = append(out, printable(f+".baseline", k+v)...)
		}
		if e.Name == "" {
			add(f+".name", "missing")
		} else if seen[e.Name] {
			add(f+".name", "%q is used twice", e.Name)
		}
		seen[e.Name] = true
		if len(e.Cells) == 0 {
			add(f+".cells", "missing: select the cells that measure the effect (matrix key: value)")
		}
		if e.Source == "" {
			add(f+".source", "missing: name the table, figure or section the effect is taken from")
		}
		if !contains(Directions, e.Direction) {
			add(f+".direction", "%q is not valid (valid: %s)", e.Direction, strings.Join(Directions, ", "))
			continue
		}
		out = append(out, e.sizeProblems(f)...)
	}
	return out
}

// sizeProblems checks that the size and its range agree with the direction.
func (e Effect) sizeProblems(f string) []string {
	var out []string
	if e.Overhead != nil {
		o := *e.Overhead
		switch {
		case math.IsNaN(o) || math.IsInf(o, 0):
			out = append(out, fmt.Sprintf("%s.overhead: %v is not a number", f, o))
		case e.Direction == Slower && o <= 0, e.Direction == Faster && o >= 0:
			out = append(out, fmt.Sprintf("%s.overhead: %g %% disagrees with direction %s (slower is positive, faster negative)", f, o, e.Direction))
		case e.Direction == None && o != 0:
			out = append(out, fmt.Sprintf("%s.overhead: %g %% with direction none: leave it out or give 0", f, o))
		}
	}
	if e.Range != nil {
		switch {
		case e.Overhead == nil:
			out = append(out, fmt.Sprintf("%s.range: a range needs the overhead it surrounds", f))
		case len(e.Range) != 2 || e.Range[0] > e.Range[1]:
			out = append(out, fmt.Sprintf("%s.range: %v is not [low, high]", f, e.Range))
		case *e.Overhead < e.Range[0] || *e.Overhead > e.Range[1]:
			out = append(out, fmt.Sprintf("%s.range: %v does not hold the overhead %g", f, e.Range, *e.Overhead))
		}
	}
	return out
}

// Figure is the published figure in words: "slower, 69 % (range 60–75 %)", "slower, size
// unknown", "no measurable difference".
func (e Effect) Figure() string {
	if e.Direction == None {
		return "no measurable difference"
	}
	if e.Overhead == nil {
		return e.Direction + ", size unknown"
	}
	s := fmt.Sprintf("%s, %s %%", e.Direction, Num(*e.Overhead))
	if len(e.Range) == 2 {
		s += fmt.Sprintf(" (range %s to %s %%)", Num(e.Range[0]), Num(e.Range[1]))
	}
	return s
}

// Num writes a percentage as the report does: one decimal, trailing zeros dropped.
func Num(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v), "0"), ".")
}

// printable says why s must not reach a terminal: a control character (C0, C1) or a
// bidirectional override. The spec refuses them everywhere when it is read; this check holds
// for a block read back from a results file, which may have been edited since.
func printable(field, s string) []string {
	for _, r := range s {
		if unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return []string{fmt.Sprintf("%s: holds the control character %U", field, r)}
		}
	}
	return nil
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// Selects reports whether a cell with these params measures e: it has every value of Cells.
func (e Effect) Selects(params map[string]string) bool {
	for k, v := range e.Cells {
		if params[k] != v {
			return false
		}
	}
	return true
}

// BaselineParams are the params of the cell a selected cell is compared with: its own with
// e.Baseline's values; nil when e names no baseline (the experiment's applies).
func (e Effect) BaselineParams(params map[string]string) map[string]string {
	if len(e.Baseline) == 0 {
		return nil
	}
	out := maps.Clone(params)
	maps.Copy(out, e.Baseline)
	return out
}

// Span is the published size as an interval: its range, or the point; sized is false when the
// study gave no size.
func (e Effect) Span() (lo, hi float64, sized bool) {
	if e.Overhead == nil {
		return 0, 0, false
	}
	if len(e.Range) == 2 {
		return e.Range[0], e.Range[1], true
	}
	return *e.Overhead, *e.Overhead, true
}

// Unmeasured says why a matrix of these cells (every cell's params, those this host skips
// included) cannot measure e: no cell has all of e's Cells values, or e names a baseline and
// no selected cell's baseline is a cell. "" when some selected cell can be compared. A study
// cut to fewer cells keeps its block: what the cut leaves out is reported as not measured.
func (e Effect) Unmeasured(cells []map[string]string) string {
	var selected []map[string]string
	for _, p := range cells {
		if e.Selects(p) {
			selected = append(selected, p)
		}
	}
	if len(selected) == 0 {
		return "no cell " + KV(e.Cells) + " in this matrix"
	}
	if len(e.Baseline) == 0 {
		return ""
	}
	for _, p := range selected {
		want := e.BaselineParams(p)
		for _, q := range cells {
			if maps.Equal(q, want) {
				return ""
			}
		}
	}
	return "its baseline, " + KV(e.BaselineParams(selected[0])) + ", is not in this matrix"
}

// KV writes params as "k=v, k=v" in key order.
func KV(params map[string]string) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var kv []string
	for _, k := range keys {
		kv = append(kv, k+"="+params[k])
	}
	return strings.Join(kv, ", ")
}
