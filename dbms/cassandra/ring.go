package cassandra

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// Cassandra as a ring (docs/topology.md): N nodes of one cluster, every node a box of the
// cell's platform, each holding a share of the token ring and RF replicas of every key.
//
// A fresh ring's tokens are allocated up front: node i of N gets num_tokens evenly spaced
// tokens interleaved with the others' (initial_token), and no node bootstraps
// (auto_bootstrap: false: there is no data to stream), so all nodes start at once instead of
// one at a time, and the ring is balanced exactly. n1 is the seed.
//
// Authentication: every node's launcher writes the run's role itself before its own CQL port
// opens (as a single node does), and system_auth is replicated to every node
// (-Dcassandra.system_auth.default_rf = N), so each node holds the role when it serves and a
// login through any node finds it. The default cassandra superuser is never created on any
// node (its setup is delayed by a day on each), so there is no window in which a default or
// missing password is accepted: until a node has written the role, it does not listen for
// CQL at all. Only the internode (storage) ports are open before that; they carry gossip and
// replication, no CQL.

const (
	// CassandraStoragePort is a node's internode listener inside a box.
	CassandraStoragePort = 7000
	cassandraMaxNodes    = 5
	portStorage          = "storage"
)

// cqlReplicas is how many replicas' answers a consistency level waits for (with every node
// up, in one data centre); 0 for a level that needs none or depends only on RF.
func cqlReplicas(consistency string, rf int) int {
	switch strings.ToUpper(consistency) {
	case "", "ONE", "LOCAL_ONE":
		return 1
	case "TWO":
		return 2
	case "THREE":
		return 3
	case "QUORUM", "LOCAL_QUORUM", "EACH_QUORUM":
		return rf/2 + 1
	case "ALL":
		return rf
	}
	return 0 // ANY: a hint suffices
}

func (Cassandra) CheckTopology(t dbms.Topology) []string {
	var p []string
	if t.Nodes < 2 || t.Nodes > cassandraMaxNodes {
		p = append(p, fmt.Sprintf("topology.nodes: %d is not valid for cassandra (valid: 2 to %d nodes of one ring)", t.Nodes, cassandraMaxNodes))
	}
	if t.Synchronous != nil {
		p = append(p, "topology.synchronous: not valid for cassandra (a write waits for as many replicas as workload.consistency says); it applies to postgresql")
	}
	switch {
	case t.ReplicationFactor == 0:
		p = append(p, fmt.Sprintf("topology.replicationFactor: missing: a cassandra ring needs the number of replicas of every row (valid: 1 to topology.nodes, %d)", t.Nodes))
	case t.ReplicationFactor < 1 || t.ReplicationFactor > max(t.Nodes, 1):
		p = append(p, fmt.Sprintf("topology.replicationFactor: %d is not valid for a ring of %d nodes (valid: 1 to %d)", t.ReplicationFactor, t.Nodes, max(t.Nodes, 1)))
	default:
		if need := cqlReplicas(t.Consistency, t.ReplicationFactor); need > t.ReplicationFactor {
			p = append(p, fmt.Sprintf("workload.consistency: %s waits for %d replicas, but topology.replicationFactor %d keeps only %d (valid with it: ANY, ONE, LOCAL_ONE, QUORUM, LOCAL_QUORUM, EACH_QUORUM, ALL%s)",
				strings.ToUpper(t.Consistency), need, t.ReplicationFactor, t.ReplicationFactor, validCounted(t.ReplicationFactor)))
		}
	}
	return p
}

func validCounted(rf int) string {
	s := ""
	for i, n := range []string{"TWO", "THREE"} {
		if i+2 <= rf {
			s += ", " + n
		}
	}
	return s
}

func (Cassandra) ClusterPorts() map[string]int {
	return map[string]int{dbms.PortClient: Cassandra{}.DefaultPort(), portStorage: CassandraStoragePort}
}

func (Cassandra) ClientNodes(t dbms.Topology) ([]int, string) {
	all := make([]int, t.Nodes)
	for i := range all {
		all[i] = i
	}
	c := strings.ToUpper(t.Consistency)
	if c == "" {
		c = "ONE"
	}
	return all, fmt.Sprintf("the client knows every node and spreads its requests over them (round robin); the node that receives a request coordinates it: a write goes to the %d replicas of its key and is acknowledged at consistency %s, a read asks replicas at %s",
		t.ReplicationFactor, c, c)
}

func (Cassandra) Node(t dbms.Topology, i int, peers []dbms.Peer) dbms.DBMS {
	return cassandraNode{t: t, i: i, peers: peers}
}

// cassandraNode is node i of a ring: the single node's script and settings with the ring's
// addresses, seeds, ports and tokens written into its yaml.
type cassandraNode struct {
	Cassandra
	t     dbms.Topology
	i     int
	peers []dbms.Peer
}

// CassandraTokens are node i's tokens in a fresh ring of n nodes with num_tokens vnodes each:
// the Murmur3 range cut into n·num_tokens equal slices, dealt to the nodes in turn, so every
// node owns the same share and its ranges are spread over the ring.
func CassandraTokens(n, i int) []string {
	total := uint64(n * cassandraNumTokens)
	step := ^uint64(0)/total + 1 // 2^64 / total, rounded up
	out := make([]string, cassandraNumTokens)
	for v := range out {
		k := uint64(v*n + i)
		out[v] = strconv.FormatInt(int64(k*step+1<<63), 10) // -2^63 + k·step
	}
	return out
}

func (n cassandraNode) node() CassandraNode {
	me, seed := n.peers[n.i], n.peers[0]
	c := CassandraNode{Cluster: "boxbench", Listen: me.Host, RPC: me.Host,
		StoragePort: strconv.Itoa(me.Port(portStorage)), NativePort: strconv.Itoa(me.Port(dbms.PortClient)),
		Seeds:  []string{net.JoinHostPort(seed.Host, strconv.Itoa(seed.Port(portStorage)))},
		Tokens: CassandraTokens(len(n.peers), n.i)}
	if net.ParseIP(me.Host) == nil {
		// A host name on a cluster network: internode traffic on the box's address under that
		// name; CQL on every address of the box, naming the node by it.
		c.RPC, c.Broadcast = "0.0.0.0", me.Host
	}
	return c
}

// Traits: the ring's, with a longer ReadyTimeout: every node's JVM starts at the same time as the others', on the same cores
// (a 3-node ring on a 2-vCPU host took 1 to 3 minutes, more when the host is busy), so a node
// gets longer than a single server to open its CQL port.
func (n cassandraNode) Traits() dbms.Traits {
	t := n.Cassandra.Traits()
	t.ReadyTimeout = max(t.ReadyTimeout, 8*time.Minute)
	return t
}

func (n cassandraNode) ConfigFiles(s dbms.Settings) map[string][]byte {
	c := n.node()
	c.Auth, c.Sizes = s.Password != "", CassandraSizing(s.MemoryBytes)
	files := map[string][]byte{cassandraYAML: CassandraConfig(c), cassandraLogback: cassandraLogbackXML,
		cassandraScript: cassandraStartScript(c.Sizes, "-Dcassandra.system_auth.default_rf="+strconv.Itoa(len(n.peers)))}
	if s.Password != "" {
		files[dbms.CredentialFile] = []byte(CassandraUser + " " + s.Password + "\n")
	}
	return files
}

// ClusterReady: every node answers CQL with the run's role, and each one's own view of the
// ring (system.local, system.peers_v2, and its gossip state) has all N nodes, NORMAL, on one
// schema version.
func (Cassandra) ClusterReady(ctx context.Context, t dbms.Topology, eps []driver.Endpoint, c driver.Credentials) (map[string]string, error) {
	byHost := map[string]string{} // host id -> node name, from each node's own system.local
	var schema string
	for i, ep := range eps {
		name := "n" + strconv.Itoa(i+1)
		v, err := cassandraView(ctx, ep, c)
		if err != nil {
			return nil, fmt.Errorf("node %s at %s: %w", name, ep, err)
		}
		if len(v.peers) != t.Nodes-1 {
			return nil, fmt.Errorf("node %s sees %d peers, not %d", name, len(v.peers), t.Nodes-1)
		}
		if v.normal != t.Nodes {
			return nil, fmt.Errorf("node %s's gossip has %d nodes NORMAL, not %d (%s)", name, v.normal, t.Nodes, v.states)
		}
		for _, s := range append(v.peers, v.schema) {
			if s != v.schema || (schema != "" && s != schema) {
				return nil, fmt.Errorf("node %s: the nodes do not agree on one schema version yet", name)
			}
		}
		schema = v.schema
		byHost[v.hostID] = name
	}
	if len(byHost) != t.Nodes {
		return nil, fmt.Errorf("%d distinct host ids among %d nodes", len(byHost), t.Nodes)
	}
	names := make([]string, 0, len(byHost))
	for _, n := range byHost {
		names = append(names, n)
	}
	sort.Strings(names)
	consistency := strings.ToUpper(t.Consistency)
	if consistency == "" {
		consistency = "ONE"
	}
	return map[string]string{"cluster_members": strings.Join(names, ","), "cluster_schema_version": schema,
		"cluster_replication_factor": strconv.Itoa(t.ReplicationFactor), "cluster_consistency": consistency,
		"cluster_tokens":                         fmt.Sprintf("%d per node, allocated up front (even shares; no bootstrap)", cassandraNumTokens),
		"cluster_system_auth_replication_factor": strconv.Itoa(t.Nodes)}, nil
}

// cassandraRingView is one node's own account of the ring.
type cassandraRingView struct {
	hostID, schema string
	peers          []string // the peers' schema versions
	normal         int      // nodes NORMAL in its gossip state, itself included
	states         string
}

func cassandraView(ctx context.Context, ep driver.Endpoint, c driver.Credentials) (*cassandraRingView, error) {
	s, err := CQLSession(ctx, driver.Endpoint{Host: ep.Host, Port: ep.Port}, c)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	v := &cassandraRingView{}
	var host, schema gocql.UUID
	var boot string
	if err := s.Query("SELECT host_id, schema_version, bootstrapped FROM system.local").ScanContext(ctx, &host, &schema, &boot); err != nil {
		return nil, fmt.Errorf("system.local: %w", err)
	}
	if boot != "COMPLETED" {
		return nil, fmt.Errorf("bootstrapped %q, not COMPLETED", boot)
	}
	v.hostID, v.schema = host.String(), schema.String()
	it := s.Query("SELECT schema_version FROM system.peers_v2").IterContext(ctx)
	var ps gocql.UUID
	for it.Scan(&ps) {
		v.peers = append(v.peers, ps.String())
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("system.peers_v2: %w", err)
	}
	// STATUS_WITH_PORT is "NORMAL,<token>" once a node has joined the ring.
	it = s.Query("SELECT address, port, status_with_port FROM system_views.gossip_info").IterContext(ctx)
	var addr net.IP
	var port int
	var st *string
	var states []string
	for it.Scan(&addr, &port, &st) {
		state := "?"
		if st != nil {
			state, _, _ = strings.Cut(*st, ",")
		}
		if state == "NORMAL" {
			v.normal++
		}
		states = append(states, net.JoinHostPort(addr.String(), strconv.Itoa(port))+" "+state)
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("system_views.gossip_info: %w", err)
	}
	sort.Strings(states)
	v.states = strings.Join(states, ", ")
	return v, nil
}
