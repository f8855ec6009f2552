package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
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

// calibrationBuilder computes the calibration section (its place: sectionBuilders, report/section.go).
var calibrationBuilder builder = func(r *Report) (Section, error) {
	return calibrationSection{r.calibrations()}, nil
}

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
