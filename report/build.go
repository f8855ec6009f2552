package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/stats"
)

// Build reads a results file and computes the report. It fails only when the file cannot be
// read; doubtful or missing numbers become warnings in the report.
func Build(store *results.Store) (*Report, error) {
	exp, err := store.Experiment()
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", store.Path(), err)
	}
	r := &Report{Experiment: Experiment{ID: exp.ID, Name: exp.Name, Seed: exp.Seed, CreatedAt: exp.CreatedAt,
		Version: exp.Version}, Env: exp.Env, Spec: exp.Spec, SteadyStateOff: exp.SteadyStateOff}
	records, err := store.Cells()
	if err != nil {
		return nil, fmt.Errorf("report %s: cells: %w", store.Path(), err)
	}
	runs, err := store.Runs()
	if err != nil {
		return nil, fmt.Errorf("report %s: runs: %w", store.Path(), err)
	}
	byCell := map[string][]results.RunRow{}
	for _, run := range runs {
		byCell[run.CellID] = append(byCell[run.CellID], run)
	}
	known := map[string]bool{}
	for _, rec := range records {
		known[rec.ID] = true
		r.Cells = append(r.Cells, r.buildCell(rec, byCell[rec.ID]))
	}
	// Runs of a cell the file does not list (an older plan): report them rather than drop
	// them, with the params their id spells.
	for _, id := range slices.Sorted(maps.Keys(byCell)) {
		if !known[id] {
			r.Cells = append(r.Cells, r.buildCell(results.CellRecord{ID: id, Params: paramsOfID(id)}, byCell[id]))
		}
	}
	if r.Events, err = store.Events(); err != nil {
		return nil, fmt.Errorf("report %s: events: %w", store.Path(), err)
	}
	r.Experiment.Pairing, r.Experiment.DBMS, r.Experiment.Workload = exp.Pairing, exp.DBMS, exp.Workload
	r.compareCells(exp.EmulatedVerdicts, exp.Pairing)
	r.keys()
	order := ranks(exp.MatrixOrder)
	r.less = func(a, b *Cell) int { return compareCells(a, b, r.Keys, order) }
	slices.SortFunc(r.Cells, r.less)
	r.group()
	r.collectOps()
	r.collectWarnings()
	okRuns := map[string][]results.RunRow{}
	for id, runs := range byCell {
		for _, run := range runs {
			if run.Status == "ok" && run.Throughput != nil {
				okRuns[id] = append(okRuns[id], run)
			}
		}
	}
	if err := r.buildSweeps(store, okRuns, exp); err != nil {
		return nil, fmt.Errorf("report %s: sweeps: %w", store.Path(), err)
	}
	r.Runs = runs
	r.series = map[string]*runSeries{}
	for _, run := range runs {
		if r.series[run.ID], err = loadRunSeries(store, run.ID); err != nil {
			return nil, fmt.Errorf("report %s: %w", store.Path(), err)
		}
	}
	r.decodeResults()
	if r.Sections, err = buildSections(r); err != nil {
		return nil, fmt.Errorf("report %s: %w", store.Path(), err)
	}
	return r, nil
}

// ranks indexes each key's values in spec order (the first of a repeated value counts), so
// that a comparison is not a search of a list of up to 10,000 values.
func ranks(order map[string][]string) map[string]map[string]int {
	out := make(map[string]map[string]int, len(order))
	for k, vs := range order {
		m := make(map[string]int, len(vs))
		for i, v := range vs {
			if _, ok := m[v]; !ok {
				m[v] = i
			}
		}
		out[k] = m
	}
	return out
}

// compareCells orders cells by their params, key by key in canonical order, values in spec
// order (unknown values after, alphabetically), then by id.
func compareCells(a, b *Cell, keys []string, order map[string]map[string]int) int {
	rank := func(k, v string) int {
		if i, ok := order[k][v]; ok {
			return i
		}
		return math.MaxInt // after every value the spec lists
	}
	for _, k := range keys {
		va, vb := a.Params[k], b.Params[k]
		if c := cmp.Or(cmp.Compare(rank(k, va), rank(k, vb)), strings.Compare(va, vb)); c != 0 {
			return c
		}
	}
	return strings.Compare(a.ID, b.ID)
}

// paramsOfID parses "k=v/k=v" (values never contain "/": they are matrix values).
func paramsOfID(id string) map[string]string {
	p := map[string]string{}
	for _, seg := range strings.Split(id, "/") {
		if k, v, ok := strings.Cut(seg, "="); ok {
			p[k] = v
		}
	}
	return p
}

func (r *Report) buildCell(rec results.CellRecord, runs []results.RunRow) *Cell {
	c := &Cell{ID: rec.ID, Params: rec.Params, SkippedReason: rec.SkippedReason, BaselineID: rec.BaselineID}
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	var ok []results.RunRow
	for _, run := range runs {
		switch {
		case run.Status != "ok":
			c.Failed = append(c.Failed, Failure{Run: run.ID, Reason: run.Reason})
		case run.Throughput == nil:
			c.Failed = append(c.Failed, Failure{Run: run.ID, Reason: "stored as ok but without a measured result"})
		default:
			ok = append(ok, run)
			c.RunIDs = append(c.RunIDs, run.ID)
			c.Reps = append(c.Reps, run.Rep)
			c.Samples = append(c.Samples, *run.Throughput)
			c.Duets = append(c.Duets, run.Duet)
		}
	}
	c.Runs = len(ok)
	for _, run := range ok {
		c.Emulated = c.Emulated || run.Emulated
	}
	c.Throughput = stats.Summarize(c.Samples)
	metrics := runMetrics(ok)
	c.Untruncated = untruncated(metrics)
	for _, run := range ok {
		if run.Steady.NotApplied() {
			if c.SteadyNotApplied == nil {
				c.SteadyNotApplied = map[results.Steady]int{}
			}
			c.SteadyNotApplied[run.Steady]++
		}
	}
	c.Warnings = aggregateWarnings(runs)
	var broken int
	c.Latency, broken = latencies(ok)
	if broken > 0 {
		c.Warnings = append(c.Warnings, Warning{Code: CodeHistogramMissing, Severity: "warning", Runs: broken,
			Message: fmt.Sprintf("%d latency histogram(s) could not be read; the cell's percentiles leave those runs out", broken)})
	}
	c.Env = cellEnv(ok, r.Env)
	c.Metrics = cellMetrics(metrics)
	return c
}

// aggregateWarnings folds the runs' warnings into one per code: how many runs have it, the
// most severe severity, and the first message as an example.
func aggregateWarnings(runs []results.RunRow) []Warning {
	var out []Warning
	idx := map[string]int{}
	for _, run := range runs {
		seen := map[string]bool{}
		for _, w := range run.Warnings {
			i, ok := idx[w.Code]
			if !ok {
				i = len(out)
				idx[w.Code] = i
				out = append(out, Warning{Code: w.Code, Severity: w.Severity, Message: w.Message})
			}
			if severityRank(w.Severity) < severityRank(out[i].Severity) {
				out[i].Severity = w.Severity
			}
			if !seen[w.Code] {
				seen[w.Code] = true
				out[i].Runs++
			}
		}
	}
	return out
}

func severityRank(s string) int {
	switch s {
	case "error":
		return 0
	case "warning":
		return 1
	case "info":
		return 2
	}
	return 3
}

func sortWarnings(ws []Warning) {
	slices.SortStableFunc(ws, func(a, b Warning) int {
		return cmp.Or(cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)),
			strings.Compare(a.Code, b.Code), strings.Compare(a.Cell, b.Cell))
	})
}

// cellEnv keeps the run environment values every ok run agrees on and the host environment
// does not already say (or says differently).
func cellEnv(ok []results.RunRow, host map[string]string) map[string]string {
	if len(ok) == 0 {
		return nil
	}
	env := map[string]string{}
	for k, v := range ok[0].Env {
		if host[k] != v {
			env[k] = v
		}
	}
	for _, run := range ok[1:] {
		for k, v := range env {
			if run.Env[k] != v {
				delete(env, k)
			}
		}
	}
	return env
}

// VerdictEmulated replaces the verdict of a comparison with an emulated box (a VM under QEMU's
// TCG) on either side, unless the spec opts in: the difference is the emulator's, not the cost
// of a box, and a "slower" would be read as one.
const VerdictEmulated = format.VerdictEmulated

// compareCells computes each cell's overhead against its baseline. A comparison with an
// emulated cell keeps its numbers but gets VerdictEmulated unless withEmulated. The cell's
// Paired is the comparison by rounds (by duets under pairing "duets"); under pairing "rounds"
// or "duets" it is also the overhead, its interval, the detectable effect and the verdict.
func (r *Report) compareCells(withEmulated bool, pairing string) {
	for _, c := range r.Cells {
		if c.Skipped() || c.IsBaseline() || c.BaselineID == "" || c.Runs == 0 {
			continue
		}
		b := r.Cell(c.BaselineID)
		if b == nil || b.Skipped() || b.Runs == 0 {
			continue // collectWarnings says why
		}
		o, err := stats.Compare(b.Samples, c.Samples, stats.CompareOptions{HigherIsBetter: true})
		if err != nil {
			c.Warnings = append(c.Warnings, Warning{Code: CodeCompareFailed, Severity: "error", Runs: c.Runs,
				Message: fmt.Sprintf("no overhead versus %s: %v", b.ID, err)})
			continue
		}
		c.Overhead = &o
		if (c.Emulated || b.Emulated) && !withEmulated {
			o.Verdict = VerdictEmulated
			c.Warnings = append(c.Warnings, Warning{Code: CodeEmulated, Severity: "warning", Runs: c.Runs,
				Message: "compared with an emulated VM (QEMU TCG, no working KVM): the difference is the emulator's, not a virtualisation cost, so there is no verdict (emulatedVerdicts: true in the spec gives one)"})
		}
		pairs, what := roundPairs(b, c), "rounds"
		if pairing == "duets" {
			pairs, what = duetPairs(b, c), "duets"
		}
		if len(pairs) >= 2 {
			if p, err := stats.PairedRatio(pairs, true, o.Alpha, stats.DefaultPower); err == nil {
				c.Paired = &p
			}
		}
		if pairing != "rounds" && pairing != "duets" || o.Verdict == VerdictEmulated {
			continue
		}
		p := c.Paired
		if p == nil {
			o.Notes = append(o.Notes, fmt.Sprintf("fewer than 2 complete %s: the verdict is the unpaired test's", what))
			continue
		}
		why := "each pair ran at the same time"
		if pairing == "rounds" {
			why = "each round ran every cell once, in random order"
		}
		o.Notes = append(o.Notes, fmt.Sprintf("overhead, interval, detectable effect and verdict from the %d %s' paired ratios (%s, so what drifts between %s cancels in its ratio); unpaired: %s %% (%s … %s), %s",
			p.N, what, why, what, format.OneDec(o.OverheadPct), format.OneDec(o.OverheadPctCI.Lo), format.OneDec(o.OverheadPctCI.Hi), format.Verdict(&o)))
		o.Ratio, o.RatioCI, o.OverheadPct, o.OverheadPctCI = p.Ratio, p.RatioCI, p.OverheadPct, p.OverheadPctCI
		o.MDEPct, o.MDEValid, o.Verdict = p.MDEPct, true, p.Verdict(true)
	}
}

// duetPairs pairs the ok runs of a cell with its baseline's by duet (runs that ran at the
// same time), in the cell's run order.
func duetPairs(base, c *Cell) [][2]float64 {
	byPair := map[string]float64{}
	for i, d := range base.Duets {
		if d.Pair != "" {
			byPair[d.Pair] = base.Samples[i]
		}
	}
	var out [][2]float64
	for i, d := range c.Duets {
		if bv, ok := byPair[d.Pair]; ok && d.Pair != "" {
			out = append(out, [2]float64{bv, c.Samples[i]})
		}
	}
	return out
}

// roundPairs pairs the ok runs of a cell with its baseline's by round (the repetition number:
// runs of one round were interleaved in one randomised block), in round order.
func roundPairs(base, c *Cell) [][2]float64 {
	return stats.PairByRound(byRep(base), byRep(c))
}

// byRep is a cell's ok runs' values by repetition.
func byRep(c *Cell) map[int]float64 {
	m := make(map[int]float64, len(c.Reps))
	for i, rep := range c.Reps {
		m[rep] = c.Samples[i]
	}
	return m
}

// keys lists the matrix keys in canonical order (spec.MatrixKeys, then unknown keys sorted)
// and those that vary among runnable cells.
func (r *Report) keys() {
	values := map[string]map[string]bool{}
	for _, c := range r.Cells {
		for k, v := range c.Params {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			if !c.Skipped() {
				values[k][v] = true
			}
		}
	}
	r.Keys = orderKeys(slices.Collect(maps.Keys(values)))
	for _, k := range r.Keys {
		if len(values[k]) > 1 {
			r.Varying = append(r.Varying, k)
		}
	}
}

func orderKeys(keys []string) []string {
	rank := func(k string) int {
		if i := slices.Index(spec.MatrixKeys, k); i >= 0 {
			return i
		}
		return len(spec.MatrixKeys)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b)) })
	return keys
}

// group puts every runnable cell under its baseline; cells without a usable baseline form the
// last group.
func (r *Report) group() {
	byBase := map[string]*Group{}
	var orphans []*Cell
	for _, c := range r.Cells {
		if c.Skipped() {
			continue
		}
		b := r.Cell(c.BaselineID)
		if c.BaselineID == "" || b == nil || b.Skipped() {
			orphans = append(orphans, c)
			continue
		}
		g := byBase[c.BaselineID]
		if g == nil {
			g = &Group{Baseline: c.BaselineID}
			byBase[c.BaselineID] = g
		}
		g.Cells = append(g.Cells, c)
	}
	for _, g := range byBase {
		slices.SortStableFunc(g.Cells, func(a, b *Cell) int {
			if a.IsBaseline() != b.IsBaseline() {
				if a.IsBaseline() {
					return -1
				}
				return 1
			}
			return r.less(a, b)
		})
		r.Groups = append(r.Groups, g)
	}
	slices.SortFunc(r.Groups, func(a, b *Group) int { return r.less(r.Cell(a.Baseline), r.Cell(b.Baseline)) })
	if len(orphans) > 0 {
		r.Groups = append(r.Groups, &Group{Cells: orphans})
	}
	for _, g := range r.Groups {
		g.Shared, g.Differ = splitParams(g.Cells, r.Keys)
	}
}

// splitParams returns the params all cells share and the keys whose values differ.
func splitParams(cells []*Cell, keys []string) (map[string]string, []string) {
	shared := map[string]string{}
	var differ []string
	for _, k := range keys {
		v, same := cells[0].Params[k], true
		for _, c := range cells[1:] {
			if c.Params[k] != v {
				same = false
				break
			}
		}
		if same {
			if v != "" {
				shared[k] = v
			}
		} else {
			differ = append(differ, k)
		}
	}
	return shared, differ
}

func (r *Report) collectOps() {
	seen := map[string]bool{}
	for _, c := range r.Cells {
		for _, l := range c.Latency {
			seen[l.Op] = true
		}
	}
	r.Ops = slices.Sorted(maps.Keys(seen))
}

// collectWarnings adds the report's own findings to the cells and lists them at report level.
func (r *Report) collectWarnings() {
	for _, c := range r.Cells {
		if c.Skipped() {
			continue
		}
		add := func(w Warning) { c.Warnings = append(c.Warnings, w) }
		total := c.Runs + len(c.Failed)
		switch {
		case c.Runs == 0 && total == 0:
			add(Warning{Code: CodeNoOKRuns, Severity: "error",
				Message: "no runs stored (the experiment was interrupted before this cell ran?): the cell has no numbers"})
		case c.Runs == 0:
			add(Warning{Code: CodeNoOKRuns, Severity: "error", Runs: total,
				Message: fmt.Sprintf("all %d runs failed (e.g. %s: %s): the cell has no numbers",
					total, c.Failed[0].Run, oneLine(c.Failed[0].Reason))})
		case len(c.Failed) > 0:
			add(Warning{Code: CodeRunsFailed, Severity: "warning", Runs: len(c.Failed),
				Message: fmt.Sprintf("%d of %d runs failed; the cell's numbers come from the %d ok runs (e.g. %s: %s)",
					len(c.Failed), total, c.Runs, c.Failed[0].Run, oneLine(c.Failed[0].Reason))})
		}
		r.baselineWarnings(c, add)
		if o := c.Overhead; o != nil {
			if o.Underpowered {
				add(Warning{Code: CodeUnderpowered, Severity: "warning", Runs: c.Runs,
					Message: fmt.Sprintf("n=%d vs baseline n=%d: too few runs for any verdict (smallest possible p = %.3g ≥ α = %g); "+
						"run at least %d per cell", o.Candidate.N, o.Baseline.N, o.UTest.MinP, o.Alpha, stats.MinRunsForAlpha(o.Alpha))})
			}
			for _, n := range o.Notes {
				if o.Underpowered && strings.Contains(n, "cannot reach") {
					continue // said above, shorter
				}
				add(Warning{Code: CodeVerdictNote, Severity: "info", Runs: c.Runs, Message: n})
			}
		}
		sortWarnings(c.Warnings)
		for _, w := range c.Warnings {
			if isReportLevel(w.Code) {
				w.Cell = c.ID
				r.Warnings = append(r.Warnings, w)
			}
		}
	}
	sortWarnings(r.Warnings)
}

func (r *Report) baselineWarnings(c *Cell, add func(Warning)) {
	if c.IsBaseline() || c.Runs == 0 {
		return
	}
	if c.BaselineID == "" {
		add(Warning{Code: CodeNoBaseline, Severity: "info", Runs: c.Runs,
			Message: "the cell has no baseline in this experiment: no overhead"})
		return
	}
	b := r.Cell(c.BaselineID)
	switch {
	case b == nil:
		add(Warning{Code: CodeNoBaseline, Severity: "warning", Runs: c.Runs,
			Message: fmt.Sprintf("baseline %s is not in the results file: no overhead", c.BaselineID)})
	case b.Skipped():
		add(Warning{Code: CodeBaselineSkipped, Severity: "warning", Runs: c.Runs,
			Message: fmt.Sprintf("baseline %s was skipped (%s): no overhead", b.ID, b.SkippedReason)})
	case b.Runs == 0:
		add(Warning{Code: CodeBaselineNoRuns, Severity: "error", Runs: c.Runs,
			Message: fmt.Sprintf("baseline %s has no ok runs (%d failed): no overhead", b.ID, len(b.Failed))})
	}
}

// isReportLevel says which cell warnings the report also lists on its own: those about the
// comparison and the runs, not the runs' validity checks (shown next to their cell).
func isReportLevel(code string) bool {
	switch code {
	case CodeRunsFailed, CodeNoOKRuns, CodeBaselineNoRuns, CodeBaselineSkipped, CodeNoBaseline,
		CodeUnderpowered, CodeCompareFailed, CodeHistogramMissing:
		return true
	}
	return false
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > 160 {
		s = string([]rune(s)[:157]) + "..."
	}
	return s
}
