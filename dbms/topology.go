package dbms

import (
	"context"
	"fmt"
	"time"

	"github.com/boxbench/boxbench/driver"
)

// Topology is the shape of a cluster a spec asks for (spec field topology). Nodes counts every
// server, the first included (etcd: members; Redis and PostgreSQL: the primary and its
// replicas). Synchronous applies to PostgreSQL's standbys only; ReplicationFactor and
// Consistency to a Cassandra ring (Consistency is the workload's CQL consistency level, checked
// against the replication factor; "" = the driver's default, ONE).
type Topology struct {
	Nodes             int
	Synchronous       *bool
	ReplicationFactor int // 0 = not given
	Consistency       string
}

// Peer is where one node of a cluster listens, as the other nodes reach it: Host is an address
// or a host name; Ports maps each listener the database names in ClusterPorts to its port.
type Peer struct {
	Name  string // "n1", "n2", …: the node's name in the cluster (and its host name on a cluster network)
	Host  string
	Ports map[string]int
}

// Port returns p's port of listener name.
func (p Peer) Port(name string) int { return p.Ports[name] }

// PortClient is the listener every node has: the one clients connect to (DefaultPort in a box).
const PortClient = "client"

// Clustered is implemented by a database that can run as a cluster of boxes (package cluster
// places them). It is the whole database-side seam: a new clustered database (a Cassandra ring:
// seeds, replication factor, consistency level) implements these four methods.
//
// Contract: CheckTopology and ClusterPorts and Node are pure descriptions. Node(t, i, peers)
// is called with the same t and peers for every i; peers are known before any node starts
// (each node's address is decided by the platform's placement, not read back after start).
// ClusterReady talks to the running nodes and is called after every node's own Ready passed.
type Clustered interface {
	// CheckTopology returns every problem of t for this database (empty: valid), each naming
	// the field, the value and what is valid.
	CheckTopology(t Topology) []string
	// ClusterPorts are the listeners of one node and their ports inside a box: PortClient
	// (DefaultPort) first; then e.g. etcd's "peer".
	ClusterPorts() map[string]int
	// Node is node i of peers (peers[i] is the node itself): the database whose configuration
	// and start command make it that member.
	Node(t Topology, i int, peers []Peer) DBMS
	// ClusterReady returns nil once the cluster itself says that every node is up and joined
	// (etcd: every member started and healthy; Redis: every replica connected and in sync),
	// and facts describing the cluster as it reported itself. eps are the nodes' client
	// endpoints as the client sees them, in node order.
	ClusterReady(ctx context.Context, t Topology, eps []driver.Endpoint, c driver.Credentials) (map[string]string, error)
	// ClientNodes are the nodes the client connects to (etcd: all; Redis: the primary), and a
	// sentence for the run's facts saying what reads and writes hit.
	ClientNodes(t Topology) (nodes []int, what string)
}

// ClusteredOf returns the Clustered side of d (Traits.Clustered), or false.
func ClusteredOf(d DBMS) (Clustered, bool) {
	c := d.Traits().Clustered
	return c, c != nil
}

// NodeOf is node i of d's cluster (Clustered.Node), with d's password when d has one (the
// wrapper's Traits see to that).
func NodeOf(d DBMS, t Topology, i int, peers []Peer) (DBMS, error) {
	c, ok := ClusteredOf(d)
	if !ok {
		return nil, fmt.Errorf("dbms %s has no topology", d.Name())
	}
	return c.Node(t, i, peers), nil
}

// ReadyTimeout is how long d may take to answer its readiness probe: def (the platforms'
// platform.ReadyTimeout) unless the database asks for longer (Traits.ReadyTimeout: a node of a
// Cassandra ring, whose JVM starts beside the other nodes' on the same cores). The provision's
// own timeout (timeouts.provision) still bounds it.
func ReadyTimeout(d DBMS, def time.Duration) time.Duration {
	return max(def, d.Traits().ReadyTimeout)
}

// NotRing refuses a ring's fields (a Cassandra ring's replication factor) in the topology of
// database name, whose every node holds all the data: the rule each such database's
// CheckTopology applies.
func NotRing(name string, t Topology) []string {
	if t.ReplicationFactor != 0 {
		return []string{fmt.Sprintf("topology.replicationFactor: not valid for %s (every node holds all the data); it applies to cassandra", name)}
	}
	return nil
}
