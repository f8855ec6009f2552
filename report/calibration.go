package report

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/calibration"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

// Calibration is what an experiment with the matrix key replica says about the host's
// resolution (examples/calibrate.yaml, docs/precision.md): A/A comparisons (cells that differ
// only in their replica label, so any difference is noise) and known effects (a cell that
// differs from its baseline only in cpus: the quota cut is the true effect of a CPU-bound
// server). Each is analysed unpaired (Fieller CI and Mann–Whitney, the report's verdict) and
// paired by rounds (stats.PairedRatio), at every sample size in Sizes: the rounds are cut
// into disjoint blocks of that many consecutive rounds, each block one test.
type Calibration struct {
	// Series is what was compared: "throughput" (the report's figure) or "throughput without
	// the steady-state cut" (the metric results.MetricUntruncated, when stored).
	Series string          `json:"series"`
	Sizes  []CalibrationAt `json:"sizes"`
	// PairsLeftOut counts the A/A pairs of cells beyond MaxAAPairs, which were not tested.
	PairsLeftOut int `json:"aa_pairs_left_out,omitempty"`
}

// MaxAAPairs bounds the A/A pairs of cells a calibration tests: n replicas of a cell make
// n(n-1)/2 pairs, and a results file from elsewhere may hold 10,000 replica cells.
const MaxAAPairs = 2000

// CalibrationAt is the calibration at one sample size (runs per cell).
type CalibrationAt struct {
	N int `json:"n"`
	// AATests is how many A/A tests (pairs × blocks) there were.
	AATests int `json:"aa_tests"`
	// NoiseFloor* summarise the 95 % CI half-width of the A/A ratio, in percent, over the A/A
	// tests (median, min, max, n in the Summary; the text shows the median).
	NoiseFloorUnpaired stats.Summary `json:"noise_floor_unpaired_pct"`
	NoiseFloorPaired   stats.Summary `json:"noise_floor_paired_pct"`
	// FalsePositives* count A/A tests whose verdict was not "no difference" (unpaired: the
	// report's verdict; paired: a CI that excludes 1).
	FalsePositivesUnpaired int `json:"false_positives_unpaired"`
	FalsePositivesPaired   int `json:"false_positives_paired"`
	// Effects are the known-effect comparisons at this size.
	Effects []KnownEffect `json:"effects"`
}

// KnownEffect is one known-effect comparison at one sample size, over its blocks.
type KnownEffect struct {
	Cell     string  `json:"cell"`
	Baseline string  `json:"baseline"`
	TruePct  float64 `json:"true_pct"` // the injected overhead, percent of the baseline
	Tests    int     `json:"tests"`
	// Detected*: tests that found the candidate slower (unpaired verdict; paired CI entirely
	// above 0 % overhead).
	DetectedUnpaired int `json:"detected_unpaired"`
	DetectedPaired   int `json:"detected_paired"`
	// Estimated* are the overhead estimates (percent) over the tests.
	EstimatedUnpaired stats.Summary `json:"estimated_unpaired_pct"`
	EstimatedPaired   stats.Summary `json:"estimated_paired_pct"`
}

// calibrationSeries are the values of a cell by pairing slot: its round, or under order: duet
// its duet's number (duets numbered in round order), so that two cells' series pair exactly the
// runs that ran in one round, or together.
type calibrationSeries map[int]float64

// calibrations computes the calibration of the report's throughput, and of the untruncated
// throughput where every run stored it; nil when the matrix has no replica key.
func (r *Report) calibrations() []Calibration {
	if !slices.Contains(r.Keys, "replica") {
		return nil
	}
	headline := map[string]calibrationSeries{}
	untrunc := map[string]calibrationSeries{}
	complete := true
	duets := r.duetNumbers()
	for _, c := range r.Cells {
		if c.Skipped() {
			continue
		}
		h, u := calibrationSeries{}, calibrationSeries{}
		for i, round := range c.Reps {
			if i < len(c.Duets) && c.Duets[i].Pair != "" {
				round = duets[c.Duets[i].Pair]
			}
			h[round] = c.Samples[i]
			if i < len(c.Untruncated) && !math.IsNaN(c.Untruncated[i]) {
				u[round] = c.Untruncated[i]
			} else {
				complete = false
			}
		}
		headline[c.ID], untrunc[c.ID] = h, u
	}
	out := []Calibration{r.calibrate("throughput", headline)}
	if complete {
		out = append(out, r.calibrate("throughput without the steady-state cut", untrunc))
	}
	return out
}

// duetNumbers numbers the report's duets 1, 2, ... in round order.
func (r *Report) duetNumbers() map[string]int {
	var duets []results.Duet
	seen := map[string]bool{}
	for _, c := range r.Cells {
		for _, d := range c.Duets {
			if d.Pair != "" && !seen[d.Pair] {
				seen[d.Pair] = true
				duets = append(duets, d)
			}
		}
	}
	slices.SortFunc(duets, func(a, b results.Duet) int {
		return cmp.Or(cmp.Compare(a.Round, b.Round), strings.Compare(a.Pair, b.Pair))
	})
	out := map[string]int{}
	for i, d := range duets {
		out[d.Pair] = i + 1
	}
	return out
}

// calibrate runs the A/A and known-effect tests of one series.
func (r *Report) calibrate(name string, series map[string]calibrationSeries) Calibration {
	var aa [][2]*Cell
	var ab [][2]*Cell // baseline, candidate
	cells := slices.DeleteFunc(slices.Clone(r.Cells), func(c *Cell) bool { return c.Skipped() || c.Runs == 0 })
	// Only cells with the same params but replica can pair: group them by those params, so
	// that finding the pairs is linear in the cells (and their number is capped).
	byID := make(map[string]*Cell, len(r.Cells))
	for _, c := range r.Cells {
		if _, seen := byID[c.ID]; !seen {
			byID[c.ID] = c
		}
	}
	group := map[string][]int{} // params but replica → indexes in cells, in order
	keyOf := make([]string, len(cells))
	for i, c := range cells {
		keyOf[i] = paramsBut(c.Params, "replica")
		group[keyOf[i]] = append(group[keyOf[i]], i)
	}
	cal := Calibration{Series: name}
	pos := map[string]int{} // how many of each group's cells came before
	for i, a := range cells {
		g, at := group[keyOf[i]], pos[keyOf[i]]
		pos[keyOf[i]]++
		for _, j := range g[at+1:] {
			if len(aa) == MaxAAPairs {
				cal.PairsLeftOut += len(g) - at - 1 // the cell's later partners, untested
				break
			}
			if onlyDiffer(a.Params, cells[j].Params, "replica") {
				aa = append(aa, [2]*Cell{a, cells[j]})
			}
		}
		if base := byID[a.BaselineID]; base != nil && base != a && onlyDiffer(a.Params, base.Params, "cpus") &&
			sensibleCPUs(a.Params["cpus"]) && sensibleCPUs(base.Params["cpus"]) {
			ab = append(ab, [2]*Cell{base, a})
		}
	}
	maxRounds := 0 // the most pairs any tested pair of cells has
	for _, p := range append(slices.Clone(aa), ab...) {
		maxRounds = max(maxRounds, len(blocks(series[p[0].ID], series[p[1].ID], 1)))
	}
	sizes := []int{4}
	if maxRounds > 4 {
		sizes = append(sizes, maxRounds)
	}
	for _, n := range sizes {
		at := CalibrationAt{N: n}
		var hwU, hwP []float64
		for _, p := range aa {
			for _, blk := range blocks(series[p[0].ID], series[p[1].ID], n) {
				u, pr, ok := compareBlock(blk)
				if !ok {
					continue
				}
				at.AATests++
				if u.RatioCI.Valid {
					hwU = append(hwU, 100*u.RatioCI.HalfWidth())
				}
				hwP = append(hwP, 100*pr.RatioCI.HalfWidth())
				if u.Verdict != stats.VerdictNoDifference {
					at.FalsePositivesUnpaired++
				}
				if !pr.RatioCI.Contains(1) {
					at.FalsePositivesPaired++
				}
			}
		}
		at.NoiseFloorUnpaired, at.NoiseFloorPaired = stats.Summarize(hwU), stats.Summarize(hwP)
		for _, p := range ab {
			bc, _ := strconv.ParseFloat(p[0].Params["cpus"], 64)
			cc, _ := strconv.ParseFloat(p[1].Params["cpus"], 64)
			k := KnownEffect{Cell: p[1].ID, Baseline: p[0].ID}
			if bc > 0 {
				k.TruePct = 100 * (1 - cc/bc)
			}
			var eu, ep []float64
			for _, blk := range blocks(series[p[0].ID], series[p[1].ID], n) {
				u, pr, ok := compareBlock(blk)
				if !ok {
					continue
				}
				k.Tests++
				eu, ep = append(eu, u.OverheadPct), append(ep, pr.OverheadPct)
				if u.Verdict == stats.VerdictSlower {
					k.DetectedUnpaired++
				}
				if pr.OverheadPctCI.Lo > 0 {
					k.DetectedPaired++
				}
			}
			k.EstimatedUnpaired, k.EstimatedPaired = stats.Summarize(eu), stats.Summarize(ep)
			at.Effects = append(at.Effects, k)
		}
		cal.Sizes = append(cal.Sizes, at)
	}
	return cal
}

// onlyDiffer reports whether a and b have the same keys and differ in key only.
// sensibleCPUs: a cpus param that is not a finite number of sensible size (a results file's
// "NaN", "1e308") makes no known effect, whose true size is computed from it.
func sensibleCPUs(v string) bool {
	f, err := strconv.ParseFloat(v, 64)
	return err != nil || (finite(f) && math.Abs(f) <= results.MaxFigure)
}

// paramsBut is params without key, as one comparable string.
func paramsBut(params map[string]string, key string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if k != key {
			b.WriteString(strconv.Quote(k) + "=" + strconv.Quote(params[k]) + ";")
		}
	}
	if _, ok := params[key]; ok {
		b.WriteString(key) // a cell without the key pairs with none that has it
	}
	return b.String()
}

func onlyDiffer(a, b map[string]string, key string) bool {
	if len(a) != len(b) || a[key] == b[key] {
		return false
	}
	for k, v := range a {
		if k != key && b[k] != v {
			return false
		}
	}
	return true
}

// blocks pairs the rounds both series have, in round order, and cuts them into disjoint blocks
// of n consecutive pairs (a trailing shorter block is dropped).
func blocks(base, cand calibrationSeries, n int) [][][2]float64 {
	var rounds []int
	for round := range base {
		if _, ok := cand[round]; ok {
			rounds = append(rounds, round)
		}
	}
	slices.Sort(rounds)
	var out [][][2]float64
	for i := 0; i+n <= len(rounds); i += n {
		var blk [][2]float64
		for _, round := range rounds[i : i+n] {
			blk = append(blk, [2]float64{base[round], cand[round]})
		}
		out = append(out, blk)
	}
	return out
}

func compareBlock(blk [][2]float64) (stats.Comparison, stats.Paired, bool) {
	b, c := make([]float64, len(blk)), make([]float64, len(blk))
	for i, p := range blk {
		b[i], c[i] = p[0], p[1]
	}
	u, err := stats.Compare(b, c, stats.CompareOptions{HigherIsBetter: true})
	if err != nil {
		return u, stats.Paired{}, false
	}
	p, err := stats.PairedRatio(blk, true, u.Alpha, stats.DefaultPower)
	if err != nil {
		return u, p, false
	}
	return u, p, true
}

// untruncated is each ok run's throughput before the steady-state cut (NaN when the run did
// not store it: steadyState off, or an older boxbench), from the runs' metrics (runMetrics).
func untruncated(metrics []map[string]float64) []float64 {
	out := make([]float64, len(metrics))
	for i, m := range metrics {
		out[i] = math.NaN()
		if v, found := m[results.MetricUntruncated]; found {
			out[i] = v
		}
	}
	return out
}

// calibrationSection shows the calibration (with the matrix key replica) as text in the
// terminal and on the page, and in JSON as the key "calibration": the A/A noise floor, false
// positives and known-effect detection per sample size and analysis. Its model is the
// calibrations, computed once when Build builds it (nil without the replica key).
type calibrationSection struct{ cals []Calibration }

var _ = addSection(60, "calibration", func(r *Report) (Section, error) {
	return calibrationSection{r.calibrations()}, nil
})

func (calibrationSection) Head() Head         { return Head{Anchor: "calibration", Title: "Calibration"} }
func (s calibrationSection) Text(w io.Writer) { writeTextCalibration(w, s.cals) }
func (calibrationSection) CSV() []CSVForm     { return nil }

func (s calibrationSection) JSON() (string, any) {
	if len(s.cals) > 0 {
		return "calibration", s.cals
	}
	return "", nil
}

func (s calibrationSection) HTML() (template.HTML, error) {
	var b strings.Builder
	writeTextCalibration(&b, s.cals)
	return preHTML(s.Head(), b.String())
}

// Stored is the report's calibration in the shape that is kept (the headline series); false
// when the experiment has no A/A test.
func (r *Report) Stored() (*calibration.Stored, bool) {
	var cals []Calibration
	if sections, err := r.sections(); err == nil {
		for _, s := range sections {
			if c, ok := s.(calibrationSection); ok {
				cals = c.cals
			}
		}
	}
	if len(cals) == 0 {
		return nil, false
	}
	c := cals[0]
	s := &calibration.Stored{Experiment: r.Experiment.ID, CreatedAt: r.Experiment.CreatedAt, Series: c.Series,
		Host: calibration.Host(r.Env), DBMS: r.Experiment.DBMS, Workload: r.Experiment.Workload}
	for _, cell := range r.Cells {
		for _, t := range cell.Duets {
			s.Duet = s.Duet || t.Pair != ""
		}
	}
	for _, at := range c.Sizes {
		if at.AATests == 0 {
			continue
		}
		s.Floors = append(s.Floors, calibration.Floor{N: at.N, Tests: at.AATests,
			Unpaired: at.NoiseFloorUnpaired.Median, Paired: at.NoiseFloorPaired.Median})
	}
	return s, len(s.Floors) > 0
}

// writeTextCalibration prints the calibration section.
func writeTextCalibration(w io.Writer, cals []Calibration) {
	if len(cals) == 0 {
		return
	}
	fmt.Fprintln(w, "\ncalibration (A/A: cells that differ only in replica; known effect: a cell that differs from its baseline only in cpus).")
	fmt.Fprintln(w, "noise floor: 95 % CI half-width of the ratio, % (median [min–max] over the A/A tests); a test is a block of n consecutive rounds;")
	fmt.Fprintln(w, "false positives: A/A tests with a verdict other than \"no difference\" (expected: 5 % of them); detected: known-effect tests that found the cut")
	for _, cal := range cals {
		fmt.Fprintf(w, "  %s:\n", cal.Series)
		if cal.PairsLeftOut > 0 {
			fmt.Fprintf(w, "    %d A/A pairs of cells tested, %d more left out (at most %d are)\n", MaxAAPairs, cal.PairsLeftOut, MaxAAPairs)
		}
		for _, at := range cal.Sizes {
			fmt.Fprintf(w, "    n=%d: noise floor unpaired %s, paired %s; false positives unpaired %d/%d, paired %d/%d\n",
				at.N, fmtRange(at.NoiseFloorUnpaired), fmtRange(at.NoiseFloorPaired),
				at.FalsePositivesUnpaired, at.AATests, at.FalsePositivesPaired, at.AATests)
			for _, k := range at.Effects {
				fmt.Fprintf(w, "      known effect %.1f %% (%s vs %s): detected unpaired %d/%d, paired %d/%d; estimated unpaired %s, paired %s\n",
					k.TruePct, k.Cell, k.Baseline, k.DetectedUnpaired, k.Tests, k.DetectedPaired, k.Tests,
					fmtRange(k.EstimatedUnpaired), fmtRange(k.EstimatedPaired))
			}
		}
	}
}

// fmtRange renders a summary of percentages as "median % [min–max] (n=N)": the median, because
// one A/A block whose baseline is nearly indistinguishable from zero has an almost unbounded
// Fieller interval that would dominate a mean.
func fmtRange(s stats.Summary) string {
	switch s.N {
	case 0:
		return "absent"
	case 1:
		return fmt.Sprintf("%.1f %% (n=1)", s.Median)
	}
	return fmt.Sprintf("%.1f %% [%.1f–%.1f] (n=%d)", s.Median, s.Min, s.Max, s.N)
}
