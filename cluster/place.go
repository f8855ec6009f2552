package cluster

import (
	"context"
	"fmt"
	"sort"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/platform"
)

// placement is where the nodes of one cluster are: each node's peer address and ports, its
// host ports (nodes on the host's network), its cpuset, and how that was decided.
type placed struct {
	peers   []dbms.Peer
	ports   []map[string]int
	cpusets []string
	network string
	how     string // the placement of the nodes' cpus, for the facts
	shared  bool   // the nodes share cpus: a warning
}

// reservePort picks a free host port; a variable so that a test can hand a node a taken one.
var reservePort = platform.FreePort

// hostCPUs are the cpus an unpinned box may run on; a variable for tests.
var hostCPUs = placement.HostCPUs

func place(ctx context.Context, r platform.Request, t dbms.Topology, c dbms.Clustered, clu platform.Clusterer, network string) (*placed, error) {
	pl := &placed{network: network}
	names := make([]string, 0, len(c.ClusterPorts()))
	for k := range c.ClusterPorts() {
		names = append(names, k)
	}
	sort.Strings(names)
	taken := map[int]bool{}
	for i := 0; i < t.Nodes; i++ {
		p := dbms.Peer{Name: fmt.Sprintf("n%d", i+1), Ports: map[string]int{}}
		if network == "" {
			// The host's network: loopback, a distinct port for every listener of every node.
			p.Host = "127.0.0.1"
			host := map[string]int{}
			for _, n := range names {
				port, err := reservePort()
				for tries := 0; err == nil && taken[port] && tries < 20; tries++ {
					port, err = reservePort()
				}
				if err != nil {
					return nil, fmt.Errorf("reserve a port for node %s: %w", p.Name, err)
				}
				taken[port] = true
				p.Ports[n], host[n] = port, port
			}
			pl.ports = append(pl.ports, host)
		} else {
			// The cluster's own network: each node under its name, at the database's ports; by
			// its address where the network has no name service.
			addr, err := clu.NodeAddress(ctx, network, i)
			if err != nil {
				return nil, fmt.Errorf("node %s's address: %w", p.Name, err)
			}
			if p.Host = p.Name; addr != "" {
				p.Host = addr
			}
			for n, port := range c.ClusterPorts() {
				p.Ports[n] = port
			}
			pl.ports = append(pl.ports, nil)
		}
		pl.peers = append(pl.peers, p)
	}
	pl.cpusets, pl.how, pl.shared = cpusets(r.Resources.Cpuset, t.Nodes, hostCPUs())
	return pl, nil
}

// cpusets gives each of n nodes a disjoint share of the server's cpus (the cpuset the single
// box would have had, else every host cpu) when there are at least n of them; otherwise every
// node gets the single box's cpuset unchanged, and the nodes share cpus (shared: a warning).
func cpusets(set string, n int, host []int) (sets []string, how string, shared bool) {
	pool := host
	if set != "" {
		if cpus, err := placement.ParseList(set); err == nil {
			pool = cpus
		}
	}
	sets = make([]string, n)
	if len(pool) < n {
		for i := range sets {
			sets[i] = set
		}
		where := "cpus " + set
		if set == "" {
			where = "every host cpu (unpinned)"
		}
		return sets, fmt.Sprintf("shared: %d nodes on %s (%d cpus; disjoint cpusets need at least %d)", n, where, len(pool), n), true
	}
	per := len(pool) / n
	for i := range sets {
		sets[i] = placement.FormatList(pool[i*per : (i+1)*per])
	}
	return sets, fmt.Sprintf("disjoint: %d cpus per node out of %s", per, placement.FormatList(pool)), false
}
