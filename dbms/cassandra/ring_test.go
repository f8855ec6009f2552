package cassandra

import (
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
)

// TestCassandraNodes: every node's yaml names the seed n1 and its own addresses and ports, its
// own share of tokens (all distinct, evenly spaced over the Murmur3 range), no bootstrap, and
// every node sets the run's role itself with system_auth replicated to every node.
func TestCassandraNodes(t *testing.T) {
	loop := []dbms.Peer{}
	for i := range 3 {
		loop = append(loop, dbms.Peer{Name: "n" + string(rune('1'+i)), Host: "127.0.0.1",
			Ports: map[string]int{dbms.PortClient: 9100 + i, portStorage: 7100 + i}})
	}
	d := dbms.WithPassword(Cassandra{}, "0123456789abcdef")
	topo := dbms.Topology{Nodes: 3, ReplicationFactor: 2}
	seen := map[string]bool{}
	for i := range loop {
		n, err := dbms.NodeOf(d, topo, i, loop)
		if err != nil {
			t.Fatal(err)
		}
		files := n.ConfigFiles(dbms.Settings{MemoryBytes: 1 << 30, Password: "0123456789abcdef"})
		y := string(files[cassandraYAML])
		for _, want := range []string{`seeds: "127.0.0.1:7100"`, "listen_address: 127.0.0.1\n",
			"storage_port: 710" + string(rune('0'+i)) + "\n", "native_transport_port: 910" + string(rune('0'+i)) + "\n",
			"auto_bootstrap: false\n", "authenticator: PasswordAuthenticator\n"} {
			if !strings.Contains(y, want) {
				t.Errorf("node %d yaml lacks %q:\n%s", i, want, y)
			}
		}
		if !strings.Contains(string(files[cassandraScript]), "-Dcassandra.system_auth.default_rf=3") ||
			strings.Contains(string(files[cassandraScript]), "storage_port=0") {
			t.Errorf("node %d script: system_auth not on every node, or the storage port left to chance", i)
		}
		if _, ok := files[dbms.CredentialFile]; !ok {
			t.Errorf("node %d does not set the run's role", i)
		}
		for _, tok := range CassandraTokens(3, i) {
			if seen[tok] {
				t.Errorf("token %s given twice", tok)
			}
			seen[tok] = true
			if !strings.Contains(y, tok) {
				t.Errorf("node %d yaml lacks its token %s", i, tok)
			}
		}
	}
	if len(seen) != 3*cassandraNumTokens {
		t.Errorf("%d tokens, want %d", len(seen), 3*cassandraNumTokens)
	}
	if first := CassandraTokens(3, 0)[0]; first != "-9223372036854775808" {
		t.Errorf("the first token is %s, want the range's start", first)
	}
	// On a cluster network: addresses by name, CQL on every address of the box.
	named := []dbms.Peer{{Name: "n1", Host: "n1", Ports: Cassandra{}.ClusterPorts()}, {Name: "n2", Host: "n2", Ports: Cassandra{}.ClusterPorts()}}
	n := Cassandra{}.Node(dbms.Topology{Nodes: 2, ReplicationFactor: 1}, 1, named)
	y := string(n.ConfigFiles(dbms.Settings{})[cassandraYAML])
	for _, want := range []string{`seeds: "n1:7000"`, "listen_address: n2\n", "rpc_address: 0.0.0.0\n", "broadcast_rpc_address: n2\n", "native_transport_port: 9042\n"} {
		if !strings.Contains(y, want) {
			t.Errorf("named node yaml lacks %q:\n%s", want, y)
		}
	}
}

// TestCassandraCheckTopology: nodes, replication factor and consistency are checked together.
func TestCassandraCheckTopology(t *testing.T) {
	for _, tc := range []struct {
		t    dbms.Topology
		want string
	}{
		{dbms.Topology{Nodes: 3, ReplicationFactor: 2}, ""},
		{dbms.Topology{Nodes: 3, ReplicationFactor: 2, Consistency: "all"}, ""},
		{dbms.Topology{Nodes: 3, ReplicationFactor: 3, Consistency: "THREE"}, ""},
		{dbms.Topology{Nodes: 1, ReplicationFactor: 1}, "topology.nodes: 1 is not valid for cassandra"},
		{dbms.Topology{Nodes: 3}, "topology.replicationFactor: missing"},
		{dbms.Topology{Nodes: 3, ReplicationFactor: 4}, "topology.replicationFactor: 4 is not valid for a ring of 3 nodes (valid: 1 to 3)"},
		{dbms.Topology{Nodes: 3, ReplicationFactor: 1, Consistency: "TWO"}, "workload.consistency: TWO waits for 2 replicas, but topology.replicationFactor 1 keeps only 1"},
	} {
		got := strings.Join(Cassandra{}.CheckTopology(tc.t), "; ")
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.t, got, tc.want)
		}
	}
}

// TestSecuredNodeReadyTimeout: a node of a secured ring keeps the node's own, longer readiness
// timeout, and a secured single server the server's.
func TestSecuredNodeReadyTimeout(t *testing.T) {
	peers := []dbms.Peer{{Name: "n1", Host: "10.0.0.1"}, {Name: "n2", Host: "10.0.0.2"}, {Name: "n3", Host: "10.0.0.3"}}
	n, _ := dbms.NodeOf(dbms.WithPassword(Cassandra{}, "pw"), dbms.Topology{Nodes: 3, ReplicationFactor: 1}, 0, peers)
	if got := dbms.ReadyTimeout(n, time.Minute); got != 8*time.Minute {
		t.Errorf("a secured Cassandra node's ready timeout is %v, want 8m", got)
	}
	if got := dbms.ReadyTimeout(dbms.WithPassword(Cassandra{}, "pw"), time.Minute); got != cassandraReadyTimeout {
		t.Errorf("a secured Cassandra server's ready timeout is %v, want %v", got, cassandraReadyTimeout)
	}
}
