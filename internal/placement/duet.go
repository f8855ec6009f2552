package placement

import (
	"fmt"
	"slices"
)

// Side is one half of a duet: the cpus of its server (the box's cpuset) and of its client.
// On a host of 2 or 3 cpus a side's client and server share its one cpu (Shared).
type Side struct {
	Server, Client []int
	Layout         string // DuetShared or DuetDisjoint
}

// Shared says the side's client and server share cpus.
func (s Side) Shared() bool {
	for _, c := range s.Client {
		if slices.Contains(s.Server, c) {
			return true
		}
	}
	return false
}

// String describes the side for the run's facts, e.g. "server cpus 1-3, client cpus 0".
func (s Side) String() string {
	if s.Shared() && slices.Equal(s.Server, s.Client) {
		return "server and client share cpus " + FormatList(s.Server)
	}
	return "server cpus " + FormatList(s.Server) + ", client cpus " + FormatList(s.Client)
}

// Duet layouts (placement.duet): how each side of a duet holds its server and its client.
const (
	// DuetShared gives each side one set of cpus that its server and its client share: on a
	// small host the request's wake-up stays on one cpu, the cheap one (6 µs against 106 µs
	// across cpus on the AMD 2-vCPU development VM; the runs' wakeup_* env), and the two sides
	// still never share a core.
	DuetShared = "shared"
	// DuetDisjoint gives each side's client a cpu of its own beside its server's (DisjointDuetCPUs).
	DuetDisjoint = "disjoint"
)

// DuetLayouts lists the valid values of placement.duet ("" chooses by the cpu count:
// DefaultDuetLayout).
var DuetLayouts = []string{DuetShared, DuetDisjoint}

// DefaultDuetLayout is the layout chosen when placement.duet is not given: disjoint where the host
// has DisjointDuetCPUs or placement.server and .client are given (disjoint), shared below.
func DefaultDuetLayout(s Sets, host []int) string {
	if len(s.Server) > 0 || len(s.Client) > 0 || len(host) >= DisjointDuetCPUs {
		return DuetDisjoint
	}
	return DuetShared
}

// MinDuetCPUs is the fewest cpus a duet needs: one per side (DuetShared). DisjointDuetCPUs is
// the fewest for DuetDisjoint: per side a cpu for the client and one or more for the server.
const (
	MinDuetCPUs      = 2
	DisjointDuetCPUs = 4
)

// Duet divides the cpus between the two sides of a duet (order: duet: a cell and its baseline
// run at the same time, compared pairwise) in the layout given ("" = DefaultDuetLayout). With
// placement.server and .client given, each list is halved (the first half to side A; disjoint
// only); without them the host's cpus are halved, and under disjoint each side gives its first
// cpu to the client and the rest to the server, under shared each side's server and client
// share its half. It fails, saying how many cpus are needed and how many there are, when a
// side would get no cpu (or, disjoint, no cpu for its server), and when neighbours are placed
// (they would be shared by both sides).
func Duet(s Sets, host []int, layout string) (a, b Side, err error) {
	if layout == "" {
		layout = DefaultDuetLayout(s, host)
	}
	if !slices.Contains(DuetLayouts, layout) {
		return a, b, fmt.Errorf("placement.duet %q is not a layout (valid: %v)", layout, DuetLayouts)
	}
	if len(s.Neighbours) > 0 {
		return a, b, fmt.Errorf("duet cannot place neighbours: both sides would share them (placement.neighbours %s)", FormatList(s.Neighbours))
	}
	pinned := len(s.Server) > 0 || len(s.Client) > 0
	if pinned && layout == DuetShared {
		return a, b, fmt.Errorf("placement.duet shared halves the host's cpus between the sides; placement.server and placement.client place the server and client apart (give placement.duet disjoint, or leave them out)")
	}
	if pinned {
		for _, r := range []struct {
			field string
			cpus  []int
		}{{"placement.server", s.Server}, {"placement.client", s.Client}} {
			if len(r.cpus) < 2 {
				return a, b, fmt.Errorf("duet splits %s between the two sides and needs at least 2 cpus in it; %q has %d",
					r.field, FormatList(r.cpus), len(r.cpus))
			}
		}
		hs, hc := len(s.Server)/2, len(s.Client)/2
		return Side{Server: s.Server[:hs], Client: s.Client[:hc], Layout: layout},
			Side{Server: s.Server[hs : 2*hs], Client: s.Client[hc : 2*hc], Layout: layout}, nil
	}
	if len(host) < MinDuetCPUs {
		return a, b, fmt.Errorf("duet runs a cell and its baseline at the same time on disjoint cpus, at least one per side, so at least %d cpus; this host offers %d (%s)",
			MinDuetCPUs, len(host), FormatList(host))
	}
	h := len(host) / 2
	if layout == DuetShared {
		return Side{Client: host[:h], Server: host[:h], Layout: layout}, Side{Client: host[h : 2*h], Server: host[h : 2*h], Layout: layout}, nil
	}
	if len(host) < DisjointDuetCPUs {
		return a, b, fmt.Errorf("placement.duet disjoint gives each side a cpu for its client and at least one for its server, so at least %d cpus; this host offers %d (%s): use placement.duet shared",
			DisjointDuetCPUs, len(host), FormatList(host))
	}
	return Side{Client: host[:1], Server: host[1:h], Layout: layout}, Side{Client: host[h : h+1], Server: host[h+1 : 2*h], Layout: layout}, nil
}
