package etcd

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// etcd as a cluster: N members that know each other from the start (static bootstrap,
// --initial-cluster), each a box of the cell's platform. The client knows every member.

// EtcdPeerPort is a member's raft listener inside a box.
const EtcdPeerPort = 2380

// etcdMaxMembers: etcd's documentation recommends at most 7 members.
const etcdMaxMembers = 7

func (Etcd) CheckTopology(t dbms.Topology) []string {
	var p []string
	if t.Nodes < 1 || t.Nodes > etcdMaxMembers {
		p = append(p, fmt.Sprintf("topology.nodes: %d is not valid for etcd (valid: 1 to %d members; 3 or 5 usually)", t.Nodes, etcdMaxMembers))
	} else if t.Nodes%2 == 0 {
		p = append(p, fmt.Sprintf("topology.nodes: %d is not valid for etcd: an even number of members tolerates no more failures than one fewer and needs a larger quorum (valid: an odd number from 1 to %d)", t.Nodes, etcdMaxMembers))
	}
	if t.Synchronous != nil {
		p = append(p, "topology.synchronous: not valid for etcd (every write is committed by a quorum of members); it applies to postgresql")
	}
	p = append(p, dbms.NotRing("etcd", t)...)
	return p
}

func (Etcd) ClusterPorts() map[string]int {
	return map[string]int{dbms.PortClient: Etcd{}.DefaultPort(), "peer": EtcdPeerPort}
}

func (Etcd) ClientNodes(t dbms.Topology) ([]int, string) {
	all := make([]int, t.Nodes)
	for i := range all {
		all[i] = i
	}
	return all, "the client knows every member and spreads its requests over them (round robin); each write is proposed through the member that received it to the leader and committed by a quorum; reads are linearizable (confirmed by the leader's quorum)"
}

func (Etcd) Node(t dbms.Topology, i int, peers []dbms.Peer) dbms.DBMS {
	return etcdNode{i: i, peers: peers}
}

// etcdNode is one member: the same script and settings as a single member, with the
// membership flags for its peers. Only the first member sets the root password and turns
// authentication on (both are cluster-wide, replicated through raft); the others listen for
// clients only on a unix socket of their own until they have applied that (the script's
// waitauth), so no member serves a client on the network without authentication.
type etcdNode struct {
	Etcd
	i     int
	peers []dbms.Peer
}

func peerURL(p dbms.Peer) string {
	return "http://" + net.JoinHostPort(p.Host, strconv.Itoa(p.Port("peer")))
}

func (n etcdNode) ConfigFiles(s dbms.Settings) map[string][]byte {
	me := n.peers[n.i]
	var initial []string
	for _, p := range n.peers {
		initial = append(initial, p.Name+"="+peerURL(p))
	}
	listen := me.Host
	if net.ParseIP(listen) == nil {
		listen = "0.0.0.0" // a host name on a cluster network: listen on the box's own addresses
	}
	member := fmt.Sprintf(`--name %s --data-dir "$d" \
  --listen-peer-urls http://%s --initial-advertise-peer-urls %s \
  --initial-cluster %s --initial-cluster-state new --initial-cluster-token boxbench`,
		me.Name, net.JoinHostPort(listen, strconv.Itoa(me.Port("peer"))), peerURL(me), strings.Join(initial, ","))
	if n.i > 0 {
		s.Password = "" // see etcdNode
	}
	return etcdFiles(s, member)
}

func (n etcdNode) StartCommand(l dbms.Layout) []string {
	me := n.peers[n.i]
	wait := n.i > 0 && l.SetPassword
	if n.i > 0 {
		l.SetPassword = false
	}
	argv := Etcd{}.StartCommand(l)
	if wait {
		argv = append(argv, "waitauth")
	}
	// The advertised client URL is the member's address as its peers (and the member list) see it.
	argv[5] = "http://" + net.JoinHostPort(me.Host, strconv.Itoa(me.Port(dbms.PortClient)))
	return argv
}

// ClusterReady: the member list has every member started (a member that has not joined has
// no name yet), and every member answers a status request agreeing on one leader.
func (Etcd) ClusterReady(ctx context.Context, t dbms.Topology, eps []driver.Endpoint, c driver.Credentials) (map[string]string, error) {
	ep := eps[0]
	ep.Members = eps
	cfg := EtcdConfig(ep, c)
	cfg.Context = ctx
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ml, err := cli.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("member list: %w", err)
	}
	var names []string
	for _, m := range ml.Members {
		if m.Name == "" {
			return nil, fmt.Errorf("member %x (%s) has not started", m.ID, strings.Join(m.PeerURLs, ","))
		}
		names = append(names, m.Name)
	}
	if len(ml.Members) != t.Nodes {
		return nil, fmt.Errorf("the member list has %d members (%s), not %d", len(ml.Members), strings.Join(names, ","), t.Nodes)
	}
	sort.Strings(names)
	byID := map[uint64]string{}
	for _, m := range ml.Members {
		byID[m.ID] = m.Name
	}
	var leader uint64
	for i, e := range cfg.Endpoints {
		st, err := cli.Status(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("member n%d at %s: status: %w", i+1, e, err)
		}
		if len(st.Errors) > 0 {
			return nil, fmt.Errorf("member n%d at %s: %s", i+1, e, strings.Join(st.Errors, "; "))
		}
		if st.Leader == 0 || (leader != 0 && st.Leader != leader) {
			return nil, fmt.Errorf("member n%d at %s does not agree on a leader yet", i+1, e)
		}
		leader = st.Leader
	}
	return map[string]string{"cluster_members": strings.Join(names, ","),
		"cluster_leader": byID[leader], "cluster_id": strconv.FormatUint(ml.Header.ClusterId, 16)}, nil
}
