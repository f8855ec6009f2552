package plan

import "math/rand/v2"

// Pair is one duet: a cell and its baseline run at the same time, each on its own side of the
// host (placement.DuetSplit), and are compared pairwise.
type Pair struct {
	Round          int
	Cell, Baseline *Cell
	// BaselineSide is the side (0 = A, 1 = B) the baseline runs on; the cell takes the other.
	BaselineSide int
}

// DuetPairs lists the duets of rounds from..to (1-based, inclusive) for order: duet: in every
// round each cell that has a baseline runs once beside it. Within a round the pairs are
// shuffled, and which side the baseline takes is drawn per pair, both from a generator seeded
// by (seed, round) as in Order, so that a difference between the two sides (a core shared with
// interrupts, a cache) falls on the cell and the baseline alike instead of biasing the ratio.
func DuetPairs(p *Plan, from, to int) []Pair {
	var out []Pair
	for r := from; r <= to; r++ {
		rng := rand.New(rand.NewPCG(p.Seed, uint64(r)))
		var round []Pair
		for _, c := range p.Cells {
			if b := p.Baseline[c]; b != nil && b != c {
				round = append(round, Pair{Round: r, Cell: c, Baseline: b, BaselineSide: rng.IntN(2)})
			}
		}
		rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		out = append(out, round...)
	}
	return out
}
