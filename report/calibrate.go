package report

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

// The calibration's model (calibration.go shows it): the A/A and known-effect comparisons of
// an experiment with the matrix key replica, computed once when Build builds the section.

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
