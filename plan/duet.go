package plan

import "math/rand/v2"

// Facts of a duet's runs, stored with each of the two (docs/precision.md).
const (
	FactDuetPair    = "duet_pair"    // the same token on both runs of one duet
	FactDuetPartner = "duet_partner" // the other run's id
	FactDuetSide    = "duet_side"    // "A: server and client share cpus 0", ...
	FactDuetLayout  = "duet_layout"  // placement.DuetShared or DuetDisjoint, given or chosen by the cpu count
)

// Pair is one duet: a cell and its baseline run at the same time, each on its own side of the
// host (placement.DuetSplit), and are compared pairwise.
type Pair struct {
	Round          int
	Cell, Baseline *Cell
	// BaselineSide is the side (0 = A, 1 = B) the baseline runs on; the cell takes the other.
	BaselineSide int
	// BaselineRep numbers the baseline's run: a baseline shared by k cells runs k times a
	// round, as (Round-1)*k + j + 1 for the j-th of its cells in canonical order.
	BaselineRep int
}

// Runs returns the pair's runs by side: index BaselineSide is the baseline's.
func (p Pair) Runs() [2]Run {
	var rs [2]Run
	rs[p.BaselineSide] = Run{Cell: p.Baseline, Rep: p.BaselineRep}
	rs[1-p.BaselineSide] = Run{Cell: p.Cell, Rep: p.Round}
	return rs
}

// DuetPairs lists the duets of rounds from..to (1-based, inclusive) for order: duet: in every
// round each cell that has a baseline runs once beside it. Within a round the pairs are
// shuffled, and which side the baseline takes is drawn per pair, both from a generator seeded
// by (seed, round) as in Order, so that a difference between the two sides (a core shared with
// interrupts, a cache) falls on the cell and the baseline alike instead of biasing the ratio.
func DuetPairs(p *Plan, from, to int) []Pair {
	var out []Pair
	partners := map[*Cell]int{}
	for _, c := range p.Cells {
		if b := p.Baseline[c]; b != nil && b != c {
			partners[b]++
		}
	}
	for r := from; r <= to; r++ {
		rng := rand.New(rand.NewPCG(p.Seed, uint64(r)))
		var round []Pair
		nth := map[*Cell]int{}
		for _, c := range p.Cells {
			if b := p.Baseline[c]; b != nil && b != c {
				rep := (r-1)*partners[b] + nth[b] + 1
				nth[b]++
				round = append(round, Pair{Round: r, Cell: c, Baseline: b, BaselineSide: rng.IntN(2), BaselineRep: rep})
			}
		}
		rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		out = append(out, round...)
	}
	return out
}
