// Package report turns an experiment's results file into what people read: a terminal table,
// JSON and CSV for tools, a self-contained HTML page with plots, and a comparison of two
// experiments that can gate CI.
//
// Build reads the results file and computes everything once (summaries, overheads, merged
// latency histograms, warnings, the runs' time series); the writers only format, and never
// open the file. Every output is deterministic for a given results file: maps are
// walked in sorted order and no clock is read, so outputs can be golden-tested.
//
// Units: throughput in operations per second (ops/s) over every operation type of the "latency"
// series; latency in microseconds (µs) from HDR histograms merged over a cell's ok runs (never
// averaged percentiles); overhead in percent of the baseline's throughput, positive = slower.
package report

import (
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

// Report is one experiment, summarised per cell.
type Report struct {
	Experiment Experiment
	// Env is the host environment recorded with the experiment (meta "env"); values that were
	// not JSON strings are kept as their JSON text.
	Env map[string]string
	// Spec is the experiment file as it was run (YAML).
	Spec string
	// SteadyStateOff says the spec turned steady-state detection off (steadyState: off).
	SteadyStateOff bool
	// Keys are the matrix keys of the cells, in canonical order; Varying are those with more
	// than one value among the runnable cells (the columns of a table).
	Keys, Varying []string
	// Ops are the operation types measured in any cell, sorted.
	Ops []string
	// Cells are every cell, skipped ones included, in display order: by params, key by key,
	// values in the order the spec lists them.
	Cells []*Cell
	// Groups are the runnable cells grouped by baseline, in display order.
	Groups []*Group
	// Warnings are the findings that make numbers of the report doubtful or absent: failed
	// runs, underpowered comparisons, baselines without ok runs. Each names its cell; the same
	// findings are also in that cell's Warnings.
	Warnings []Warning
	// Events are what happened to the experiment: resumes, data loads, adaptive repetitions.
	Events []results.Event
	// Sweeps are the matrix keys that vary the workload's load or size, with one curve per
	// combination of the other keys (report/sweep.go).
	Sweeps []*Sweep
	// Runs are every stored run in run order, as the results file holds them (the per-run CSV
	// and the HTML's run panels show them all).
	Runs []results.RunRow
	// Sections are the parts after the overview table, in order, each rendering itself in
	// every format (report/section.go): the models Build computed, once, for every registered
	// section (sectionBuilders), in their order.
	Sections []Section

	// decoded are the runs' stored results, decoded once (decodeResults), in the order of Runs.
	decoded []runResult
	// series are the runs' time series, by run id, for the HTML's run panels; nil for a
	// report not built from a results file.
	series map[string]*runSeries
	less   func(a, b *Cell) int // display order of cells
}

// Experiment identifies the experiment a report is about.
type Experiment struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Seed      string `json:"seed"`
	CreatedAt string `json:"created_at"`
	Version   string `json:"boxbench_version"`
	// Pairing is how the comparisons were made (spec's pairing: none, rounds or duets).
	Pairing string `json:"pairing,omitempty"`
	// DBMS and Workload are the spec's database and its workload's type.
	DBMS     string `json:"dbms,omitempty"`
	Workload string `json:"workload,omitempty"`
}

// Cell is one point of the matrix and what its runs measured.
type Cell struct {
	ID     string
	Params map[string]string
	// SkippedReason is why the cell was not run; empty for a runnable cell.
	SkippedReason string
	// BaselineID is the cell this one is compared with: its own id for a baseline, "" when it
	// has none (its baseline cell was skipped or is not in the matrix).
	BaselineID string

	Runs    int       // ok runs (the n of every summary)
	Failed  []Failure // failed runs, in run order
	RunIDs  []string  // ok runs, in run order
	Reps    []int     // the repetition (round) number of each ok run, in run order
	Samples []float64 // throughput of each ok run (ops/s), in run order
	// Duets are the ok runs' duets (order: duet; the zero Duet for a run of no duet), in run
	// order: a run is paired with the baseline's run of the same Pair.
	Duets []results.Duet
	// Untruncated is each ok run's throughput before the steady-state cut (ops/s; NaN where
	// the run did not store it), in run order.
	Untruncated []float64
	// SteadyNotApplied counts the ok runs whose steady-state detection was not applied, by
	// why (results.Steady.NotApplied); nil when there are none.
	SteadyNotApplied map[results.Steady]int
	Throughput       stats.Summary

	// Overhead compares this cell's throughput with its baseline's (HigherIsBetter); nil for
	// a baseline and when no comparison is possible (a Warning says why).
	Overhead *stats.Comparison
	// Paired is the same comparison analysed by rounds (stats.PairedRatio), by duets under
	// order: duet. Under the spec's pairing "none" it is shown beside the verdict, which stays
	// with the unpaired test; under "rounds" or "duets" it is the verdict (compareCells). Nil
	// with fewer than 2 complete pairs.
	Paired *stats.Paired
	// Latency per operation type, sorted by Op; absent ops have no histogram.
	Latency []OpLatency
	// Warnings: the runs' validity warnings aggregated per code, and the report's findings
	// about this cell. Ordered by severity (error first), then code.
	Warnings []Warning
	// Metrics are the workload-specific figures of the ok runs (fio IOPS, sysbench tps,
	// configured and obtained shares beside a neighbour), sorted by name.
	Metrics []Metric
	// Emulated says the cell's box is a VM whose CPU QEMU emulates (TCG): its numbers are the
	// emulator's, labelled so everywhere, and its comparisons carry no verdict by default.
	Emulated bool
	// Env holds the run environment values that are the same in every ok run of the cell and
	// differ from the experiment's host environment (engine versions, storage driver, ...).
	Env map[string]string
}

// IsBaseline reports whether the cell is the baseline of its group.
func (c *Cell) IsBaseline() bool { return c.BaselineID == c.ID && c.ID != "" }

// Skipped reports whether the cell was not run.
func (c *Cell) Skipped() bool { return c.SkippedReason != "" }

// Failure is one failed run.
type Failure struct {
	Run    string `json:"run"`
	Reason string `json:"reason"`
}

// OpLatency is the latency of one operation type in one cell, from the merged HDR histograms of
// the cell's ok runs (series "latency": from the intended start in open loop). Values in µs.
type OpLatency struct {
	Op                            string
	Count                         int64 // operations in the merged histogram: the n of its percentiles
	Errors                        int64
	P50, P90, P95, P99, P999, Max float64
	// RunP50, RunP95 and RunP99 summarise the per-run percentiles across runs (µs): their
	// spread says how repeatable the tail is. They are not a way to combine runs.
	RunP50, RunP95, RunP99 stats.Summary
	// Spectrum is the latency at percentiles spaced evenly on a "nines" axis
	// (x = -log10(1 - p/100)), up to what Count supports, for plots.
	Spectrum []Quantile
}

// Quantile is one point of a latency spectrum.
type Quantile struct {
	Percentile float64 // 0–100
	Micros     float64
}

// Group is a baseline and the cells compared with it.
type Group struct {
	// Baseline is the baseline's cell id, "" for the cells that have no baseline.
	Baseline string
	// Shared are the params every cell of the group has in common, Differ the keys that vary
	// inside the group (what the comparison is about), in canonical order.
	Shared map[string]string
	Differ []string
	// Cells: the baseline first, then the others in id order.
	Cells []*Cell
}

// Warning is one finding. For a cell it aggregates the runs that carry the same code.
type Warning struct {
	Code     string `json:"code"`
	Severity string `json:"severity"` // "info", "warning" or "error"
	// Runs is how many of the cell's runs the finding concerns.
	Runs int `json:"runs"`
	// Message is one example message (from the first run that has it).
	Message string `json:"message"`
	// Cell names the cell of a report-level warning.
	Cell string `json:"cell,omitempty"`
}

// Report-level warning codes (run warnings keep the codes of package check).
const (
	CodeRunsFailed       = "runs_failed"
	CodeNoOKRuns         = "no_ok_runs"
	CodeBaselineNoRuns   = "baseline_no_ok_runs"
	CodeBaselineSkipped  = "baseline_skipped"
	CodeNoBaseline       = "no_baseline"
	CodeUnderpowered     = "underpowered"
	CodeVerdictNote      = "verdict_note"
	CodeCompareFailed    = "comparison_failed"
	CodeHistogramMissing = "histogram_unreadable"
	CodeEmulated         = "emulated_no_verdict"
)

// Cell returns the cell with the given id, or nil.
func (r *Report) Cell(id string) *Cell {
	for _, c := range r.Cells {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// LatencyOf returns the cell's latency of op, or nil.
func (c *Cell) LatencyOf(op string) *OpLatency {
	for i := range c.Latency {
		if c.Latency[i].Op == op {
			return &c.Latency[i]
		}
	}
	return nil
}
