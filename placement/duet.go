package placement

import (
	"fmt"
	"slices"
)

// Side is one half of a duet: the cpus of its server (the box's cpuset) and of its client.
// On a host of 2 or 3 cpus a side's client and server share its one cpu (Shared).
type Side struct {
	Server, Client []int
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

// MinDuetCPUs is the fewest cpus a duet needs: one per side. From DisjointDuetCPUs on, each
// side has a cpu for its client and others for its server; below, a side's client and server
// share its cpu (as they share the host on a 2-cpu machine without a duet), so that the two
// sides still never share a core.
const (
	MinDuetCPUs      = 2
	DisjointDuetCPUs = 4
)

// DuetSplit divides the cpus between the two sides of a duet (order: duet: a cell and its
// baseline run at the same time, compared pairwise). With placement.server and .client given,
// each list is halved (the first half to side A); without them the host's cpus are halved and,
// from DisjointDuetCPUs on, each side gives its first cpu to the client and the rest to the
// server. It fails, saying how many cpus are needed and how many there are, when a side would
// get no cpu, and when neighbours are placed (they would be shared by both sides).
func DuetSplit(s Sets, host []int) (a, b Side, err error) {
	if len(s.Neighbours) > 0 {
		return a, b, fmt.Errorf("duet cannot place neighbours: both sides would share them (placement.neighbours %s)", FormatList(s.Neighbours))
	}
	if len(s.Server) > 0 || len(s.Client) > 0 {
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
		return Side{Server: s.Server[:hs], Client: s.Client[:hc]}, Side{Server: s.Server[hs : 2*hs], Client: s.Client[hc : 2*hc]}, nil
	}
	if len(host) < MinDuetCPUs {
		return a, b, fmt.Errorf("duet runs a cell and its baseline at the same time on disjoint cpus, at least one per side, so at least %d cpus; this host offers %d (%s)",
			MinDuetCPUs, len(host), FormatList(host))
	}
	if len(host) < DisjointDuetCPUs {
		return Side{Client: host[:1], Server: host[:1]}, Side{Client: host[1:2], Server: host[1:2]}, nil
	}
	h := len(host) / 2
	return Side{Client: host[:1], Server: host[1:h]}, Side{Client: host[h : h+1], Server: host[h+1 : 2*h]}, nil
}
