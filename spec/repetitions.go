package spec

import (
	"slices"
)

func (c *checker) repetitions() {
	r := c.e.Repetitions
	if r.Min < 1 || r.Max > 1000 {
		c.add("repetitions", "%d is out of range (valid: 1 to 1000 runs per cell)", r.Min)
		return
	}
	if r.Adaptive() {
		if r.Min < 2 {
			c.add("repetitions.min", "%d: adaptive repetitions need min 2 or more to estimate an interval", r.Min)
		}
		if r.TargetCIHalfWidth == 0 && r.TargetEffect == 0 {
			c.add("repetitions", "adaptive repetitions need a target: targetCIHalfWidth (e.g. 2%%: each cell's mean within ±2 %%) or targetEffect (e.g. 3%%: each comparison able to detect a 3 %% overhead)")
		}
	} else if r.Max < r.Min {
		c.add("repetitions.max", "%d is below min %d", r.Max, r.Min)
	}
}

// DefaultPairing is the pairing of a spec that names none: its order's (duets under duet).
func DefaultPairing(order string) string {
	if order == "duet" {
		return "duets"
	}
	return "none"
}

// pairing checks that the pairing fits the order: rounds are blocks only when every round runs
// each cell once in random order, duets only under order: duet (where they are the pairing).
func (c *checker) pairing() {
	e := c.e
	if !slices.Contains(Pairings, e.Pairing) {
		c.oneOf("pairing", e.Pairing, Pairings)
		return
	}
	switch {
	case e.Order == "duet" && e.Pairing != "duets":
		c.add("pairing", "%q under order: duet, whose runs are compared by duet: use pairing: duets (or leave it out)", e.Pairing)
	case e.Pairing == "duets" && e.Order != "duet":
		c.add("pairing", "duets needs order: duet (order is %q): use none or, under order: randomized, rounds", e.Order)
	case e.Pairing == "rounds" && e.Order != "randomized":
		c.add("pairing", "rounds needs order: randomized, where every round runs each cell once (order is %q, whose repetitions of a cell run one after another): use none", e.Order)
	}
}
