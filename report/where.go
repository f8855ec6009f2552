package report

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

// Where the time goes (docs/report.md): per cell, the host's busy CPU of the measured window
// booked to the components that did the work (results.CPUPerOp metrics, per operation), the
// other costs per operation of the database box (results.PerOp), and against the cell's
// baseline each component's difference with Welch's interval, and a sentence naming the
// components that account for the extra cost where the intervals support it.

// metricSoftirqPerOp is the host's soft-interrupt CPU per operation, host-wide (the runner's
// runner.MetricSoftirqPerOp): an overlay of the components, not one of them, since with
// tick-based accounting it is already inside the tasks' figures.
const metricSoftirqPerOp = "host_softirq_cpu_per_op_ns"

// whereGroups are the component groups in the order the section lists them; a group not
// listed (from a newer boxbench) comes after them, by name.
var whereGroups = []string{results.GroupDatabase, results.GroupBox, results.GroupNeighbour,
	results.GroupClient, results.GroupKernel, results.GroupOther}

// Units of the section's figures.
const (
	unitMicrosPerOp = "µs/op"
	unitPct         = "%"
)

// WhereCell is one cell's account: only cells whose ok runs carry the host's busy CPU per
// operation (cpu_ns_per_op.host.busy) have one.
type WhereCell struct {
	Cell string `json:"cell"`
	// Runs are the ok runs that carry the account (the n of the host's figure).
	Runs int `json:"runs"`
	// Interrupts is what kernel.interrupts holds on the runs' kernel (the fact
	// where_interrupts: "all", "idle" or "unknown"; "idle (3), all (1)" when runs differ,
	// "" when no run says).
	Interrupts string `json:"interrupts"`
	// HostBusy is the host's busy CPU per operation: the total the components add up to.
	HostBusy WhereFigure `json:"host_busy"`
	// Named is each run's host busy CPU less group "other" (the tasks no component names): the
	// cost of the box and its run, what a difference from the baseline is explained by.
	Named WhereFigure `json:"named"`
	// Components in display order: by group (whereGroups), then by size.
	Components []WhereComponent `json:"components"`
	// Sum is each run's sum of its components; Balance each run's (sum − host busy) / host
	// busy in %; OtherShare each run's group "other" over its host busy in %.
	Sum        WhereFigure `json:"components_sum"`
	Balance    WhereFigure `json:"balance_pct"`
	OtherShare WhereFigure `json:"other_share_pct"`
	// Softirq is the host's soft-interrupt CPU per operation, host-wide: "of which in soft
	// interrupts", not a component (nil: not stored).
	Softirq *WhereFigure `json:"softirq_host_wide"`
	// Events are the kernel's events per operation (per_op.softirq_…), Costs the database
	// box's other costs per operation (per_op.…), each sorted by name.
	Events []WhereCost `json:"kernel_events_per_op"`
	Costs  []WhereCost `json:"costs_per_op"`
	// Versus is the comparison with the cell's baseline; nil for a baseline and for a cell
	// whose baseline has no account.
	Versus *WhereVersus `json:"versus_baseline,omitempty"`
	// VersusNote says why a cell with a baseline has no comparison: the baseline's runs carry
	// no account.
	VersusNote string `json:"versus_note,omitempty"`

	label string // the cell by its varying keys
}

// WhereComponent is one component of a cell.
type WhereComponent struct {
	Group string `json:"group"`
	Name  string `json:"name"`
	// CPU is its CPU time per operation over the runs that measured it; nil when no run did.
	CPU *WhereFigure `json:"cpu"`
	// NotMeasured says why runs could not measure it (from where_not_measured), "" when every
	// run that carries the account did or the component is not in this box at all.
	NotMeasured string `json:"not_measured,omitempty"`
	// Diff is candidate − baseline (nil for a baseline).
	Diff *WhereDiff `json:"vs_baseline,omitempty"`
}

// WhereCost is another cost per operation (per_op.<what>; the unit is in what).
type WhereCost struct {
	What  string       `json:"what"`
	Value *WhereFigure `json:"value"`
	Diff  *WhereDiff   `json:"vs_baseline,omitempty"`
}

// WhereFigure is a mean over runs with its 95 % Student-t interval (nil bounds: n < 2).
type WhereFigure struct {
	Mean   float64  `json:"mean"`
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
	N      int      `json:"n"`
	Unit   string   `json:"unit"`

	sum stats.Summary
}

// WhereDiff is a difference candidate − baseline with Welch's 95 % interval (stats.DiffCI;
// nil bounds when either side has fewer than 2 runs). A component absent from one side's
// runs and not listed as unmeasured there is not in that box: it counts as 0 there, and the
// interval is the other side's own (Note says so).
type WhereDiff struct {
	// Mean is nil when there is no difference to form: the figure was not measured on one
	// side (Note says which).
	Mean      *float64 `json:"mean"`
	CILow     *float64 `json:"ci_low"`
	CIHigh    *float64 `json:"ci_high"`
	N         int      `json:"n"`
	BaselineN int      `json:"baseline_n"`
	Unit      string   `json:"unit"`
	Note      string   `json:"note,omitempty"`

	ci stats.Interval
}

// WhereVersus compares a cell's account with its baseline's.
type WhereVersus struct {
	Baseline string `json:"baseline"`
	// Total is the named components' CPU per operation (WhereCell.Named), candidate −
	// baseline: the other tasks of a busy host are not the box's cost. HostBusy is the host's
	// busy CPU's difference, other tasks included.
	Total    *WhereDiff `json:"total"`
	HostBusy *WhereDiff `json:"host_busy"`
	// Softirq is the host-wide soft-interrupt CPU per operation, candidate − baseline; nil
	// when either side lacks it.
	Softirq *WhereDiff `json:"softirq_host_wide,omitempty"`
	// Sentence names the components that account for most of the difference, by the rule of
	// docs/report.md.
	Sentence string `json:"sentence"`

	baseLabel string
}

// figure summarises values (ns per operation scaled by scale) in unit; nil for no values.
func figure(values []float64, scale float64, unit string) *WhereFigure {
	if len(values) == 0 {
		return nil
	}
	xs := make([]float64, len(values))
	for i, v := range values {
		xs[i] = v * scale
	}
	s := stats.Summarize(xs)
	f := &WhereFigure{Mean: s.Mean, N: s.N, Unit: unit, sum: s}
	f.CILow, f.CIHigh = bounds(s.CI95)
	return f
}

func bounds(iv stats.Interval) (lo, hi *float64) {
	if !iv.Valid {
		return nil, nil
	}
	return &iv.Lo, &iv.Hi
}

// runAccount is one ok run's metrics and facts.
type runAccount struct {
	metrics map[string]float64
	facts   map[string]string
}

// cellAccounts are the ok runs of c that carry the host's busy CPU per operation; byID
// indexes r.Runs and r.decoded (their results, decoded once).
func (r *Report) cellAccounts(c *Cell, byID map[string]int) []runAccount {
	var out []runAccount
	busy := results.CPUPerOp(results.GroupHost, "busy")
	for _, id := range c.RunIDs {
		i, found := byID[id]
		if !found || !r.decoded[i].ok {
			continue
		}
		if m := r.decoded[i].res.Metrics; m != nil {
			if _, ok := m[busy]; ok {
				out = append(out, runAccount{m, r.Runs[i].Facts})
			}
		}
	}
	return out
}

// compKey is a component: group and name.
type compKey struct{ group, name string }

func groupRank(g string) int {
	if i := slices.Index(whereGroups, g); i >= 0 {
		return i
	}
	return len(whereGroups)
}

// orderComponents sorts by group (whereGroups, unknown after by name), then by CPU, largest
// first (the unmeasured last), then by name.
func orderComponents(cs []WhereComponent) {
	size := func(c WhereComponent) float64 {
		if c.CPU == nil {
			return math.Inf(-1)
		}
		return c.CPU.Mean
	}
	slices.SortFunc(cs, func(a, b WhereComponent) int {
		return cmp.Or(cmp.Compare(groupRank(a.Group), groupRank(b.Group)), strings.Compare(a.Group, b.Group),
			cmp.Compare(size(b), size(a)), strings.Compare(a.Name, b.Name))
	})
}

// notMeasured parses the runs' where_not_measured facts ("component: why; …") into why per
// component, and which runs said it: "why" alone when every run did, "why (k of n runs)"
// otherwise. A component is "group.name" or "group name" as the runner wrote it.
func notMeasured(runs []runAccount) map[compKey]string {
	type said struct {
		why  string
		runs int
	}
	by := map[compKey]*said{}
	var order []compKey
	for _, run := range runs {
		seen := map[compKey]bool{}
		for _, part := range splitNotMeasured(run.facts[results.FactNotAccounted]) {
			comp, why, _ := strings.Cut(part, ":")
			comp, why = strings.TrimSpace(comp), strings.TrimSpace(why)
			if comp == "" {
				continue
			}
			k := splitComponent(comp)
			if seen[k] {
				continue
			}
			seen[k] = true
			if by[k] == nil {
				by[k] = &said{why: why}
				order = append(order, k)
			}
			by[k].runs++
		}
	}
	out := make(map[compKey]string, len(by))
	for _, k := range order {
		s := by[k]
		why := s.why
		if why == "" {
			why = "no reason given"
		}
		if s.runs < len(runs) {
			why += " (" + strconv.Itoa(s.runs) + " of " + strconv.Itoa(len(runs)) + " runs)"
		}
		out[k] = why
	}
	return out
}

// componentHead is how an entry of where_not_measured starts: a component ("group.name",
// "group name" or "group", each of [a-z0-9-]) and a colon.
var componentHead = regexp.MustCompile(`^[a-z0-9-]+([. ][a-z0-9-]+)?:`)

// splitNotMeasured splits where_not_measured into its entries: at each "; " that a component
// and its colon follow, so that a reason may itself hold a semicolon.
func splitNotMeasured(fact string) []string {
	var out []string
	for _, part := range strings.Split(fact, "; ") {
		part = strings.TrimSpace(part)
		if len(out) > 0 && !componentHead.MatchString(part) {
			out[len(out)-1] += "; " + part
			continue
		}
		out = append(out, part)
	}
	return out
}

// splitComponent reads "group.name" or "group name" (a bare group: name "").
func splitComponent(s string) compKey {
	if g, n, ok := strings.Cut(s, "."); ok {
		return compKey{g, n}
	}
	if g, n, ok := strings.Cut(s, " "); ok {
		return compKey{g, strings.TrimSpace(n)}
	}
	return compKey{s, ""}
}

// interruptsFact is what the runs say kernel.interrupts holds.
func interruptsFact(runs []runAccount) string {
	count := map[string]int{}
	var order []string
	for _, run := range runs {
		v := run.facts[results.FactInterrupts]
		if v == "" {
			continue
		}
		if count[v] == 0 {
			order = append(order, v)
		}
		count[v]++
	}
	if len(order) == 1 {
		return order[0]
	}
	var parts []string
	for _, v := range order {
		parts = append(parts, v+" ("+strconv.Itoa(count[v])+")")
	}
	return strings.Join(parts, ", ")
}
