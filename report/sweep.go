package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/stats"
)

// A sweep is a matrix key with numeric values that varies the workload's load or size
// (spec.SweepKeys: workload.targetRate, workload.threads, …). For each combination of the other
// keys (a platform, a network …) its cells form a curve: throughput against the key, and
// latency against throughput, with the point where the box saturated and the resource that
// telemetry saw saturated there. docs/report.md ("Sweeps") defines every figure.

// Saturation rule (documented in docs/report.md; change both together).
const (
	// SatElasticity: a step is saturated when less than this share of its relative increase in
	// load became a relative increase in throughput …
	SatElasticity = 0.5
	// SatFollow: … or, for an offered load, when throughput fell below this share of it …
	SatFollow = 0.9
	// SatP99Factor: … and when its corrected p99 is at least this many times the lowest p99 of
	// the lighter loads.
	SatP99Factor = 2.0
	// BusyShare: a resource used at or above this share of its capacity counts as saturated.
	BusyShare = 0.8
)

// Sweep is one sweep key and its curves.
type Sweep struct {
	Key string `json:"key"`
	// Offered says the key is the load offered to the database in operations per second (an
	// open loop's target rate): a curve that keeps up has throughput = key.
	Offered bool     `json:"offered_load"`
	Curves  []*Curve `json:"curves"`
}

// Curve is the cells of one combination of the other keys, in increasing key value.
type Curve struct {
	Label  string            `json:"label"`  // the other keys' values, e.g. "platform=docker network=host"
	Params map[string]string `json:"params"` // those keys
	Points []*CurvePoint     `json:"points"`
	// Saturation is nil when no step of the curve meets the rule (the note says so).
	Saturation *Saturation `json:"saturation,omitempty"`
	Note       string      `json:"note,omitempty"`

	offered bool // the sweep's key is an offered load
}

// CurvePoint is one cell of a curve. Latencies are µs, each a summary over the cell's ok runs
// of one percentile per run, computed from the run's histograms of every operation type merged.
type CurvePoint struct {
	Cell       string        `json:"cell"`
	X          float64       `json:"x"`
	Throughput stats.Summary `json:"throughput_ops_per_second"`
	// P50, P99: latency from the intended start of each operation (coordinated omission
	// corrected); in a closed loop it equals the service time.
	P50 stats.Summary `json:"latency_p50_us"`
	P99 stats.Summary `json:"latency_p99_us"`
	// ServiceP50, ServiceP99: from the actual send to the reply (N = 0 in a closed loop, where
	// there is no second series).
	ServiceP50 stats.Summary `json:"service_p50_us"`
	ServiceP99 stats.Summary `json:"service_p99_us"`
	// Resources: each resource's use over the measured window, as a share of its capacity.
	Resources []ResourceUse `json:"resources,omitempty"`
}

// ResourceUse is a resource's mean use over each run's measured window, summarised over runs.
type ResourceUse struct {
	Name string `json:"name"` // one of the Res* names
	// Share is use over capacity (0–1, per run); Capacity says what the capacity was.
	Share    stats.Summary `json:"share"`
	Capacity string        `json:"capacity"`
}

// Resource names.
const (
	ResServerCPU = "server CPU"
	// ResServerQuota is the share of CFS periods in which the box was throttled.
	ResServerQuota = "server CPU quota"
	ResHostCPU     = "host CPU"
	ResDisk        = "disk"
	ResSoftirq     = "network softirq"
	ResClientCPU   = "client CPU"
	ResOtherCPU    = "other CPU"
)

// Saturation is where a curve stopped carrying more load.
type Saturation struct {
	// Index and X: the saturation point, the last point before the first saturated step (the
	// highest load the box still carried). Throughput is its mean throughput, P99 its
	// corrected p99.
	Index      int     `json:"index"`
	X          float64 `json:"x"`
	Throughput float64 `json:"throughput_ops_per_second"`
	P99        float64 `json:"latency_p99_us"`
	// Past is the index of the first saturated point; Elasticity and P99Ratio are the figures
	// that met the rule there.
	Past       int     `json:"past_index"`
	Elasticity float64 `json:"elasticity"`
	// Followed is throughput over the offered load at Past (offered-load sweeps only, else 0).
	Followed float64 `json:"followed,omitempty"`
	P99Ratio float64 `json:"p99_ratio"`
	// Bottleneck is the resource with the highest share at Past when it is at least BusyShare,
	// else "" (none saturated, as far as the telemetry can see); Why gives the figures.
	Bottleneck string `json:"bottleneck"`
	Why        string `json:"why"`
}

// buildSweeps finds the sweep keys among the varying keys and computes their curves from the
// ok runs (their histograms, and their telemetry read from store).
func (r *Report) buildSweeps(store *results.Store, okRuns map[string][]results.RunRow, exp results.Experiment) error {
	for _, key := range r.Varying {
		if !spec.IsSweepKey(key) || key == "workload.requestDistribution" {
			continue
		}
		sw := &Sweep{Key: key, Offered: slices.Contains(spec.OfferedLoadKeys, key)}
		byLabel := map[string]*Curve{}
		for _, c := range r.Cells {
			x, err := strconv.ParseFloat(c.Params[key], 64)
			if c.Skipped() || err != nil || !finite(x) || math.Abs(x) > results.MaxFigure {
				continue // a results file's NaN or 1e308 is on no curve (ParseFloat reads "NaN")
			}
			others := map[string]string{}
			var parts []string
			for _, k := range r.Varying {
				if k != key {
					others[k] = c.Params[k]
					parts = append(parts, k+"="+c.Params[k])
				}
			}
			label := strings.Join(parts, " ")
			cv := byLabel[label]
			if cv == nil {
				cv = &Curve{Label: label, Params: others, offered: sw.Offered}
				byLabel[label] = cv
				sw.Curves = append(sw.Curves, cv)
			}
			pt := &CurvePoint{Cell: c.ID, X: x, Throughput: c.Throughput}
			if err := pt.fromRuns(store, okRuns[c.ID], exp); err != nil {
				return err
			}
			cv.Points = append(cv.Points, pt)
		}
		for _, cv := range sw.Curves {
			slices.SortFunc(cv.Points, func(a, b *CurvePoint) int { return cmp.Compare(a.X, b.X) })
			cv.saturate()
		}
		if len(sw.Curves) > 0 {
			r.Sweeps = append(r.Sweeps, sw)
		}
	}
	return nil
}

// fromRuns fills the point's latencies and resource use from its ok runs.
func (pt *CurvePoint) fromRuns(store *results.Store, runs []results.RunRow, exp results.Experiment) error {
	var p50, p99, s50, s99 []float64
	use := map[string][]float64{}
	capacity := map[string]string{}
	for _, run := range runs {
		if v, ok := runPercentiles(run, LatencySeries); ok {
			p50, p99 = append(p50, v[0]), append(p99, v[1])
		}
		if v, ok := runPercentiles(run, "service"); ok {
			s50, s99 = append(s50, v[0]), append(s99, v[1])
		}
		if store == nil {
			continue
		}
		ivs, err := store.Intervals(run.ID)
		if err != nil {
			return fmt.Errorf("intervals of %s: %w", run.ID, err)
		}
		pts, err := store.Series(run.ID)
		if err != nil {
			return fmt.Errorf("telemetry of %s: %w", run.ID, err)
		}
		from, to, ok := measuredWindow(ivs)
		if !ok {
			continue
		}
		for _, u := range runResources(pts, from, to, run, exp) {
			use[u.name] = append(use[u.name], u.share)
			capacity[u.name] = u.capacity
		}
	}
	pt.P50, pt.P99 = stats.Summarize(p50), stats.Summarize(p99)
	pt.ServiceP50, pt.ServiceP99 = stats.Summarize(s50), stats.Summarize(s99)
	for _, name := range []string{ResServerCPU, ResServerQuota, ResHostCPU, ResOtherCPU, ResDisk, ResSoftirq, ResClientCPU} {
		if len(use[name]) > 0 {
			pt.Resources = append(pt.Resources, ResourceUse{Name: name, Share: stats.Summarize(use[name]), Capacity: capacity[name]})
		}
	}
	return nil
}

// runPercentiles returns a run's p50 and p99 (µs) of one series over every operation type
// that is the run's own (not Secondary), from their histograms merged.
func runPercentiles(run results.RunRow, series string) ([2]float64, bool) {
	var hists [][]byte
	for _, o := range run.Ops {
		if o.Series == series && !o.Secondary && o.Count > 0 && len(o.Hist) > 0 {
			hists = append(hists, o.Hist)
		}
	}
	if len(hists) == 0 {
		return [2]float64{}, false
	}
	h, err := stats.MergeHistograms(hists)
	if err != nil || h.TotalCount() == 0 {
		return [2]float64{}, false
	}
	v, err := stats.Percentiles(h, 50, 99)
	if err != nil {
		return [2]float64{}, false
	}
	return [2]float64{micros(v[0]), micros(v[1])}, true
}

// measuredWindow is the span of a run's measured intervals on the run's clock.
func measuredWindow(ivs []results.IntervalRow) (from, to time.Duration, ok bool) {
	for _, iv := range ivs {
		if iv.Phase != "measure" {
			continue
		}
		if !ok || iv.Start < from {
			from = iv.Start
		}
		if !ok || iv.End > to {
			to = iv.End
		}
		ok = true
	}
	return from, to, ok
}

// saturate applies the rule (docs/report.md): point k is the saturation point when it is the
// first point such that
//
//	(a) every later point stalls against it — its elasticity from k, the relative throughput
//	    gain over the relative load increase, is below SatElasticity, or (for an offered load)
//	    its throughput is below SatFollow of the load offered — so throughput never again
//	    followed the load (a noisy dip that a heavier point recovers from is not saturation);
//	(b) the corrected p99 of point k+1 is at least SatP99Factor times the lowest corrected p99
//	    of points 0…k.
func (cv *Curve) saturate() {
	ps := cv.Points
	usable := func(p *CurvePoint) bool { return p.Throughput.N > 0 && p.Throughput.Mean > 0 && p.P99.N > 0 && p.X > 0 }
	elasticity := func(k, j *CurvePoint) float64 { return (j.Throughput.Mean/k.Throughput.Mean - 1) / (j.X/k.X - 1) }
	stalls := func(k, j *CurvePoint) bool {
		return elasticity(k, j) < SatElasticity || (cv.offered && j.Throughput.Mean < SatFollow*j.X)
	}
	lowest := math.Inf(1)
	for k := 0; k+1 < len(ps); k++ {
		if !usable(ps[k]) {
			continue
		}
		lowest = math.Min(lowest, ps[k].P99.Mean)
		next := ps[k+1]
		if !usable(next) || next.P99.Mean < SatP99Factor*lowest {
			continue
		}
		all := true
		for _, j := range ps[k+1:] {
			if usable(j) && !stalls(ps[k], j) {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		s := &Saturation{Index: k, X: ps[k].X, Throughput: ps[k].Throughput.Mean, P99: ps[k].P99.Mean,
			Past: k + 1, Elasticity: elasticity(ps[k], next), P99Ratio: next.P99.Mean / lowest}
		if cv.offered {
			s.Followed = next.Throughput.Mean / next.X
		}
		s.Bottleneck, s.Why = bottleneck(next.Resources)
		cv.Saturation = s
		return
	}
	switch {
	case len(ps) < 2:
		cv.Note = "one point: no curve"
	default:
		cv.Note = fmt.Sprintf("not reached up to %s: no point after which throughput stopped following the load for good while p99 corrected reached %g× its lowest",
			trimZeros(format.Sig3(ps[len(ps)-1].X)), SatP99Factor)
	}
}

// satSentence says where a curve saturated, why the rule fired, and what was saturated.
func satSentence(sw *Sweep, cv *Curve) string {
	s := cv.Saturation
	if s == nil {
		return "saturation point: " + cv.Note
	}
	who := "no resource saturated as far as telemetry can see"
	if s.Bottleneck != "" {
		who = "bottleneck: " + s.Bottleneck
	}
	where := fmt.Sprintf("saturation point: %s = %s", shortKey(sw.Key), trimZeros(format.Sig3(s.X)))
	if s.Index == 0 {
		where += " (the lowest value swept: the box may saturate below it)"
	}
	followed := ""
	if cv.offered {
		followed = fmt.Sprintf(", throughput was %s %% of the offered load", noNegZero(100*s.Followed))
	}
	return fmt.Sprintf("%s, throughput %s ops/s, p99 corrected %s µs; at the next step (%s) %s %% of the added load became throughput%s and p99 corrected was %s× the lowest; %s (%s)",
		where, format.Group(s.Throughput), format.Sig3(s.P99), trimZeros(format.Sig3(cv.Points[s.Past].X)), noNegZero(100*s.Elasticity),
		followed, trimZeros(format.Sig3(s.P99Ratio)), who, s.Why)
}

// noNegZero formats a percentage without decimals, never "-0".
func noNegZero(v float64) string {
	s := strconv.FormatFloat(v, 'f', 0, 64)
	if s == "-0" {
		return "0"
	}
	return s
}
