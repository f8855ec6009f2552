// Package compare is the gate of `boxbench compare`: two experiments' reports compared cell by
// cell on throughput, BASE (before) against NEXT (after a kernel, runtime or boxbench upgrade),
// with a tolerance for regressions. It reads only the reports (report.Build made them) and
// writes text or JSON.
package compare

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/report"
	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/stats"
)

// Comparison is two experiments compared cell by cell on throughput: BASE (before) against
// NEXT (after a kernel, runtime or boxbench upgrade). It is what `boxbench compare` prints
// and gates on.
type Comparison struct {
	Base, Next report.Experiment
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

// New matches the runnable cells of base and next by id (and params) and compares their
// throughput samples with stats.Compare. maxRegression is a fraction in [0, 1). It fails when
// the tolerance is invalid or no cell matches (comparing unrelated experiments is a mistake,
// not a pass).
func New(base, next *report.Report, maxRegression float64) (*Comparison, error) {
	if base == nil || next == nil {
		return nil, errors.New("compare: missing report")
	}
	if !(maxRegression >= 0 && maxRegression < 1) {
		return nil, fmt.Errorf("compare: max regression %v: must be a fraction in [0, 1), e.g. 0.05 for 5 %%", maxRegression)
	}
	c := &Comparison{Base: base.Experiment, Next: next.Experiment, MaxRegression: maxRegression,
		SpecChanged: strings.TrimSpace(base.Spec) != strings.TrimSpace(next.Spec)}
	nextCells := map[string]*report.Cell{}
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
			format.OrDash(next.Experiment.ID), format.OrDash(base.Experiment.ID))
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

func compareCell(bc, nc *report.Cell, maxRegression float64) CellChange {
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
