package report

import (
	"fmt"

	"github.com/boxbench/boxbench/results"
)

// The duet fixture: precision-redis-duet's cells (examples/precision-redis-duet.yaml), smaller.
// Replicas b and c and a 3 % quota cut of a each run at the same time as replica a, one duet
// of each per round; what drifts between duets (the host's load) is shared by both runs of
// one, so the paired comparison by duets sees through it.

const duetSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: duet
dbms: redis
workload: {type: ycsb, mix: c, threads: 8, duration: 10s, warmup: 3s}
limits: {cpus: 0.5, memory: 1GiB}
matrix:
  zip:
    replica: [a, b, c, a]
    cpus: ["0.50", "0.50", "0.50", "0.485"]
repetitions: 6
order: duet
baseline: {replica: a, cpus: "0.50"}
`

// fixDuet is a run's duet and the drift its duet shared (a factor on throughput).
type fixDuet struct {
	results.Duet
	drift float64
}

func duetCells() []fixCell {
	const rounds = 6
	mix := map[string]float64{"read": 1}
	p := func(replica, cpus string) map[string]string {
		return map[string]string{"replica": replica, "cpus": cpus}
	}
	base := map[string]string{"replica": "a", "cpus": "0.50"}
	a := fixCell{params: p("a", "0.50"), baseline: base, thr: 21000, cv: 0.004, mix: mix, reps: 3 * rounds, duets: map[int]fixDuet{}}
	partners := []fixCell{
		{params: p("b", "0.50"), thr: 21000},
		{params: p("c", "0.50"), thr: 21000},
		{params: p("a", "0.485"), thr: 21000 * 0.97},
	}
	for j := range partners {
		x := &partners[j]
		x.baseline, x.cv, x.mix, x.reps, x.duets = base, 0.004, mix, rounds, map[int]fixDuet{}
	}
	for r := 1; r <= rounds; r++ {
		drift := 1 + 0.08*float64((r*5)%3-1) // the host's load, the same for both runs of a duet
		for j := range partners {
			d := fixDuet{results.Duet{Pair: fmt.Sprintf("r%d-%d", r, j+1), Round: r}, drift}
			a.duets[3*(r-1)+j+1] = d
			partners[j].duets[r] = d
		}
	}
	return append([]fixCell{a}, partners...)
}
