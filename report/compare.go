package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/stats"
)

// Comparison is two experiments compared cell by cell on throughput: BASE (before) against
// NEXT (after a kernel, runtime or boxbench upgrade). It is what `boxbench compare` prints
// and gates on.
type Comparison struct {
	Base, Next Experiment
	// MaxRegression is the tolerance as a fraction: 0.05 lets NEXT lose up to 5 % of BASE's
	// throughput before a significant loss counts as a regression.
	MaxRegression float64
	// Cells are the cells both experiments ran, in BASE's display order.
	Cells []CellChange
	// OnlyBase and OnlyNext are the ids of runnable cells that the other experiment lacks
	// (absent or skipped there).
	OnlyBase, OnlyNext []string
	// Env lists the host environment values that differ: usually the point of the comparison.
	Env []EnvChange
	// SpecChanged is true when the experiment files differ (the comparison may then compare
	// different workloads).
	SpecChanged bool
}

// CellChange is one cell of both experiments.
type CellChange struct {
	ID                 string
	Params             map[string]string
	BaseRuns, NextRuns int // ok runs
	// Throughput compares NEXT's runs (candidate) with BASE's (baseline), higher is better:
	// Ratio is next/base, OverheadPct the throughput NEXT lost in % (negative: gained). Nil
	// when a side has no ok runs; Note says why.
	Throughput *stats.Comparison
	Note       string
	// Regressed: NEXT is significantly slower (verdict "slower") and loses more than
	// MaxRegression of BASE's throughput (point estimate).
	Regressed bool
	// P99 compares the merged p99 latency per op type (µs); informational, no test.
	P99 []LatencyChange
}

// LatencyChange is a merged percentile of one op type in both experiments (µs).
type LatencyChange struct {
	Op         string
	Base, Next float64
}

// EnvChange is one host environment value of both experiments ("" when absent).
type EnvChange struct {
	Key  string `json:"key"`
	Base string `json:"base"`
	Next string `json:"next"`
}

// Regressed reports whether any cell regressed beyond the tolerance: the CLI's exit status.
func (c *Comparison) Regressed() bool {
	for _, cc := range c.Cells {
		if cc.Regressed {
			return true
		}
	}
	return false
}

// Underpowered lists the cells whose run counts cannot give a verdict at α = 0.05: the gate
// is blind there.
func (c *Comparison) Underpowered() []string {
	var out []string
	for _, cc := range c.Cells {
		if cc.Throughput != nil && cc.Throughput.Underpowered {
			out = append(out, cc.ID)
		}
	}
	return out
}

// Compare matches the runnable cells of base and next by id (and params) and compares their
// throughput samples with stats.Compare. maxRegression is a fraction in [0, 1). It fails when
// the tolerance is invalid or no cell matches (comparing unrelated experiments is a mistake,
// not a pass).
func Compare(base, next *Report, maxRegression float64) (*Comparison, error) {
	if base == nil || next == nil {
		return nil, errors.New("compare: missing report")
	}
	if !(maxRegression >= 0 && maxRegression < 1) {
		return nil, fmt.Errorf("compare: max regression %v: must be a fraction in [0, 1), e.g. 0.05 for 5 %%", maxRegression)
	}
	c := &Comparison{Base: base.Experiment, Next: next.Experiment, MaxRegression: maxRegression,
		SpecChanged: strings.TrimSpace(base.Spec) != strings.TrimSpace(next.Spec)}
	nextCells := map[string]*Cell{}
	for _, nc := range next.Cells {
		if !nc.Skipped() {
			nextCells[nc.ID] = nc
		}
	}
	matched := map[string]bool{}
	for _, bc := range base.Cells {
		if bc.Skipped() {
			continue
		}
		nc := nextCells[bc.ID]
		if nc == nil || !maps.Equal(bc.Params, nc.Params) {
			c.OnlyBase = append(c.OnlyBase, bc.ID)
			continue
		}
		matched[bc.ID] = true
		c.Cells = append(c.Cells, compareCell(bc, nc, maxRegression))
	}
	for _, nc := range next.Cells {
		if !nc.Skipped() && !matched[nc.ID] {
			c.OnlyNext = append(c.OnlyNext, nc.ID)
		}
	}
	if len(c.Cells) == 0 {
		return nil, fmt.Errorf("compare: no cell of %s matches a cell of %s; are these runs of the same experiment?",
			orDash(next.Experiment.ID), orDash(base.Experiment.ID))
	}
	keys := map[string]bool{}
	for k := range base.Env {
		keys[k] = true
	}
	for k := range next.Env {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if base.Env[k] != next.Env[k] {
			c.Env = append(c.Env, EnvChange{Key: k, Base: base.Env[k], Next: next.Env[k]})
		}
	}
	return c, nil
}

func compareCell(bc, nc *Cell, maxRegression float64) CellChange {
	cc := CellChange{ID: bc.ID, Params: bc.Params, BaseRuns: bc.Runs, NextRuns: nc.Runs}
	switch {
	case bc.Runs == 0 && nc.Runs == 0:
		cc.Note = "no ok runs in either experiment"
	case bc.Runs == 0:
		cc.Note = "no ok runs in BASE"
	case nc.Runs == 0:
		cc.Note = "no ok runs in NEXT"
	default:
		cmp, err := stats.Compare(bc.Samples, nc.Samples, stats.CompareOptions{HigherIsBetter: true})
		if err != nil {
			cc.Note = err.Error()
			break
		}
		cc.Throughput = &cmp
		cc.Regressed = cmp.Verdict == stats.VerdictSlower && cmp.OverheadPct > maxRegression*100
		if cmp.Underpowered {
			cc.Note = fmt.Sprintf("too few runs for a verdict (n=%d vs %d; at least %d each): a regression cannot be detected",
				cmp.Baseline.N, cmp.Candidate.N, stats.MinRunsForAlpha(cmp.Alpha))
		}
	}
	ops := map[string]bool{}
	for _, l := range bc.Latency {
		ops[l.Op] = true
	}
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		b, n := bc.LatencyOf(op), nc.LatencyOf(op)
		if b != nil && n != nil && b.Count > 0 && n.Count > 0 {
			cc.P99 = append(cc.P99, LatencyChange{Op: op, Base: b.P99, Next: n.P99})
		}
	}
	return cc
}

// WriteComparison writes the comparison as a terminal table and a one-line result.
func WriteComparison(w io.Writer, c *Comparison) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "BASE %s (%s)  vs  NEXT %s (%s); regression tolerance %s %% of BASE throughput\n",
		orDash(c.Base.Name), orDash(c.Base.ID), orDash(c.Next.Name), orDash(c.Next.ID), oneDec(c.MaxRegression*100))
	for _, e := range c.Env {
		wrap(bw, "  changed "+e.Key+": ", orDash(e.Base)+" → "+orDash(e.Next), textCols)
	}
	if c.SpecChanged {
		fmt.Fprintln(bw, "  the experiment files differ: check that the workloads are comparable")
	}
	wrap(bw, "", "Change: NEXT's mean throughput versus BASE's, in % (negative = slower), with the 95 % Fieller CI; "+
		"verdict from Mann–Whitney and the CI at α = 0.05; \"no diff >X%\": none larger than X % (detectable at 80 % power). "+
		"p99: merged histograms, µs.", textCols)
	fmt.Fprintln(bw)

	head := []string{"CELL", "RUNS", "BASE ops/s", "NEXT ops/s", "CHANGE % (95% CI)", "VERDICT", "p99 µs BASE → NEXT", "RESULT"}
	right := map[int]bool{1: true, 2: true, 3: true}
	rows := [][]string{head}
	for _, cc := range c.Cells {
		row := []string{cc.ID, fmt.Sprintf("%d/%d", cc.BaseRuns, cc.NextRuns), "-", "-", "-", "-", p99Change(cc.P99), ""}
		if t := cc.Throughput; t != nil {
			row[2], row[3] = group(t.Baseline.Mean), group(t.Candidate.Mean)
			row[4] = signed(-t.OverheadPct)
			if t.OverheadPctCI.Valid {
				row[4] += " (" + oneDec(-t.OverheadPctCI.Hi) + " … " + oneDec(-t.OverheadPctCI.Lo) + ")"
			}
			row[5] = verdictShort(t)
			if t.Underpowered {
				row[5] += "*"
			}
		}
		switch {
		case cc.Regressed:
			row[7] = "REGRESSION"
		case cc.Throughput == nil:
			row[7] = "not compared"
		case cc.Throughput.Verdict == stats.VerdictSlower:
			row[7] = "within tolerance"
		default:
			row[7] = "ok"
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(head))
	for _, row := range rows {
		for i, s := range row {
			widths[i] = max(widths[i], width(s))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, s := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(pad(s, widths[i], right[i]))
		}
		fmt.Fprintln(bw, strings.TrimRight(b.String(), " "))
	}
	notes := false
	for _, cc := range c.Cells {
		if cc.Note != "" {
			if !notes {
				fmt.Fprintln(bw)
				notes = true
			}
			wrap(bw, "  "+cc.ID+": ", cc.Note, textCols)
		}
	}
	if len(c.OnlyBase)+len(c.OnlyNext) > 0 {
		fmt.Fprintln(bw)
	}
	if len(c.OnlyBase) > 0 {
		wrap(bw, "only in BASE: ", strings.Join(c.OnlyBase, ", "), textCols)
	}
	if len(c.OnlyNext) > 0 {
		wrap(bw, "only in NEXT: ", strings.Join(c.OnlyNext, ", "), textCols)
	}
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, c.verdictLine())
	return bw.Flush()
}

func p99Change(ls []LatencyChange) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%s %s → %s", l.Op, sig3(l.Base), sig3(l.Next)))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// verdictLine is the comparison's result in one sentence.
func (c *Comparison) verdictLine() string {
	var reg []string
	for _, cc := range c.Cells {
		if cc.Regressed {
			reg = append(reg, fmt.Sprintf("%s (%s %%)", cc.ID, signed(-cc.Throughput.OverheadPct)))
		}
	}
	s := fmt.Sprintf("PASS: no significant throughput regression beyond %s %% in %d compared cells", oneDec(c.MaxRegression*100), len(c.Cells))
	if len(reg) > 0 {
		s = fmt.Sprintf("FAIL: %d of %d cells regressed beyond %s %%: %s", len(reg), len(c.Cells),
			oneDec(c.MaxRegression*100), strings.Join(reg, "; "))
	}
	if u := c.Underpowered(); len(u) > 0 {
		s += fmt.Sprintf(" (%d cells had too few runs to tell)", len(u))
	}
	return s
}

// comparisonJSON is the JSON shape of a comparison.
type comparisonJSON struct {
	Base          Experiment       `json:"base"`
	Next          Experiment       `json:"next"`
	MaxRegression float64          `json:"max_regression"`
	Regressed     bool             `json:"regressed"`
	Cells         []cellChangeJSON `json:"cells"`
	OnlyBase      []string         `json:"only_base"`
	OnlyNext      []string         `json:"only_next"`
	Env           []EnvChange      `json:"environment_changes"`
	SpecChanged   bool             `json:"spec_changed"`
}

type cellChangeJSON struct {
	ID        string                        `json:"id"`
	Params    map[string]string             `json:"params"`
	Runs      [2]int                        `json:"runs"` // base, next
	Base      *float64                      `json:"base_mean,omitempty"`
	Next      *float64                      `json:"next_mean,omitempty"`
	Ratio     *float64                      `json:"ratio,omitempty"`
	CI95      *[2]float64                   `json:"ci95"`
	PValue    *float64                      `json:"p_value,omitempty"`
	Verdict   string                        `json:"verdict,omitempty"`
	Regressed bool                          `json:"regressed"`
	Note      string                        `json:"note,omitempty"`
	P99       map[string]map[string]float64 `json:"p99_us,omitempty"`
}

// WriteComparisonJSON writes the comparison as JSON: per cell the ratio next/base of mean
// throughput with its 95 % CI, p-value, verdict and whether it regressed.
func WriteComparisonJSON(w io.Writer, c *Comparison) error {
	out := comparisonJSON{Base: c.Base, Next: c.Next, MaxRegression: c.MaxRegression, Regressed: c.Regressed(),
		OnlyBase: nonNil(c.OnlyBase), OnlyNext: nonNil(c.OnlyNext), Env: nonNil(c.Env), SpecChanged: c.SpecChanged}
	for _, cc := range c.Cells {
		j := cellChangeJSON{ID: cc.ID, Params: cc.Params, Runs: [2]int{cc.BaseRuns, cc.NextRuns}, Regressed: cc.Regressed, Note: cc.Note}
		if t := cc.Throughput; t != nil {
			j.Base, j.Next, j.Ratio, j.PValue = ptr(t.Baseline.Mean), ptr(t.Candidate.Mean), ptr(t.Ratio), ptr(t.UTest.P)
			j.CI95 = pair(t.RatioCI)
			j.Verdict = string(t.Verdict)
		}
		for _, l := range cc.P99 {
			if j.P99 == nil {
				j.P99 = map[string]map[string]float64{}
			}
			j.P99[l.Op] = map[string]float64{"base": l.Base, "next": l.Next}
		}
		out.Cells = append(out.Cells, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
