package study

import (
	"fmt"

	"github.com/boxbench/boxbench/spec/published"
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
