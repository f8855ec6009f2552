package study

import (
	"fmt"
	"math"

	"github.com/boxbench/boxbench/spec/published"
	"github.com/boxbench/boxbench/stats"
)

// Verdict is how this host's estimate stands against a published effect.
type Verdict string

// The verdicts, from the strongest agreement down. The report shows their words as they are.
const (
	// AgreesSize: the estimate's interval excludes no difference on the published side and
	// holds the published figure (or overlaps its range); for a "none" finding, the interval
	// holds zero.
	AgreesSize Verdict = "agrees in direction and size"
	// AgreesDirection: the interval lies on the published side of zero but misses the
	// published figure, or the study gave no size.
	AgreesDirection Verdict = "agrees in direction only"
	// Contradicts: the interval lies on the other side of zero, or holds zero while excluding
	// the published size (this host rules the published effect out), or finds a difference
	// where the study found none.
	Contradicts Verdict = "contradicts"
	// CannotTell: no interval, or one that holds both zero and the published effect (it is
	// wider than the effect), or one that holds zero where the study gave no size.
	CannotTell Verdict = "cannot tell"
	// NotComparable: what this host measured is not what the study measured (an emulated VM,
	// a deviation of the experiment); the reason says which.
	NotComparable Verdict = "not comparable"
	// NotMeasured: the experiment's matrix has no cell that measures the effect (a study cut
	// to fewer cells keeps its published block); the reason names the cells it lacks
	// (published.Effect.Unmeasured).
	NotMeasured Verdict = "not measured"
)

// Estimate is this host's figure for one comparison: the overhead in percent of the
// baseline's throughput (positive = slower) with its confidence interval.
type Estimate struct {
	Overhead float64
	Low      float64
	High     float64
	// Valid says the interval exists (enough runs on both sides, a baseline that did work).
	Valid bool
	// NotComparable, when set, is why this estimate does not measure the published effect
	// (the cell's box is emulated, ...).
	NotComparable string
	// MDE is the comparison's detectable effect (percent, α 0.05, 80 % power) at N runs per
	// cell (the two cells' harmonic mean); 0 when it has none. ForecastFor uses them.
	MDE float64
	N   int
}

// Forecast is how many runs per cell would decide a "cannot tell" on this host: at the
// comparison's own spread, the runs whose detectable effect is Target, the published size
// (the end of its range nearer zero), or for a study that gave no size the size seen here.
type Forecast struct {
	Target float64 `json:"target_pct"`
	Runs   int     `json:"runs_per_cell"`
	// Reachable is false when even Runs (the bound) would not detect Target.
	Reachable bool `json:"reachable"`
}

// ForecastFor forecasts the runs that would decide e on this host; ok is false when there is
// nothing to forecast from (no detectable effect, no size to aim at).
func ForecastFor(e Effect, est Estimate) (f Forecast, ok bool) {
	spread, ok := stats.SpreadFromMDE(est.MDE, est.N, false, stats.DefaultAlpha, stats.DefaultPower)
	if !ok {
		return Forecast{}, false
	}
	lo, hi, sized := e.Span()
	switch {
	case sized && lo*hi > 0:
		f.Target = math.Min(math.Abs(lo), math.Abs(hi))
	case sized:
		f.Target = math.Abs(*e.Overhead)
	default:
		f.Target = math.Abs(est.Overhead)
	}
	if !(f.Target > 0) {
		return Forecast{}, false
	}
	f.Runs, f.Reachable = stats.RunsFor(spread, f.Target, false, stats.DefaultAlpha, stats.DefaultPower, stats.MaxForecastRuns)
	return f, true
}

// Text is the forecast in words: "≈ 23 runs per cell would detect 5 % here".
func (f Forecast) Text() string {
	if !f.Reachable {
		return fmt.Sprintf("even %d runs per cell would not detect %s %% here", f.Runs, published.Num(f.Target))
	}
	return fmt.Sprintf("≈ %d runs per cell would detect %s %% here", f.Runs, published.Num(f.Target))
}

// Judge compares a published effect with this host's estimate and says why in words.
func Judge(e Effect, est Estimate) (Verdict, string) {
	if e.NotComparable != "" {
		return NotComparable, e.NotComparable
	}
	if est.NotComparable != "" {
		return NotComparable, est.NotComparable
	}
	if !est.Valid {
		return CannotTell, "no interval: too few ok runs, or runs too noisy for a bounded one (the baseline's mean not clearly above zero)"
	}
	in := fmt.Sprintf("[%s, %s] %%", published.Num(est.Low), published.Num(est.High))
	holdsZero := est.Low <= 0 && est.High >= 0
	if e.Direction == None {
		if holdsZero {
			return AgreesSize, fmt.Sprintf("no difference here either: %s holds 0", in)
		}
		return Contradicts, fmt.Sprintf("a difference here: %s excludes 0", in)
	}
	sign := 1.0
	if e.Direction == Faster {
		sign = -1
	}
	lo, hi, sized := e.Span()
	holdsFigure := sized && lo <= est.High && hi >= est.Low
	switch {
	case holdsZero && !sized:
		return CannotTell, fmt.Sprintf("%s holds 0 and the study gave no size", in)
	case holdsZero && holdsFigure:
		return CannotTell, fmt.Sprintf("%s holds both 0 and the published %s: wider than the effect", in, e.Figure())
	case holdsZero:
		return Contradicts, fmt.Sprintf("%s holds 0 and excludes the published %s", in, e.Figure())
	case est.Low*sign < 0: // the whole interval is on the other side of zero
		return Contradicts, fmt.Sprintf("%s: %s here, the study found it %s", in, opposite(e.Direction), e.Direction)
	case holdsFigure:
		return AgreesSize, fmt.Sprintf("%s holds the published %s", in, e.Figure())
	case sized:
		return AgreesDirection, fmt.Sprintf("%s is %s but excludes the published %s", in, e.Direction, e.Figure())
	default:
		return AgreesDirection, fmt.Sprintf("%s is %s; the study gave no size", in, e.Direction)
	}
}

func opposite(direction string) string {
	if direction == Slower {
		return Faster
	}
	return Slower
}
