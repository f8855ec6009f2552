package dbms

import (
	"testing"
	"time"
)

// TestWrappersKeepTraits: a wrapper embeds the database and changes only the traits it means
// to: WithPassword keeps every trait (and secures each cluster node), Idle keeps only the built
// files. Before traits were data, each capability had its own unwrap loop and they disagreed.
func TestWrappersKeepTraits(t *testing.T) {
	for _, d := range []DBMS{PostgreSQL{}, MariaDB{}, Redis{}, Etcd{}, FerretDB{}, Cassandra{}} {
		s := WithPassword(d, "pw")
		if (ObserverOf(s) == nil) != (ObserverOf(d) == nil) {
			t.Errorf("%s: WithPassword changed the observer", d.Name())
		}
		if _, ok := ClusteredOf(s); ok != (d.Traits().Clustered != nil) {
			t.Errorf("%s: WithPassword changed the cluster side", d.Name())
		}
		if ServerBinary(s) != ServerBinary(d) || len(BuiltFiles(s)) != len(BuiltFiles(d)) {
			t.Errorf("%s: WithPassword changed the server binary or the built files", d.Name())
		}
		i := Idle(d)
		if ObserverOf(i) != nil || i.Traits().Clustered != nil || ReadyTimeout(i, time.Second) != time.Second {
			t.Errorf("%s: an idle box kept a trait that needs the server: %+v", d.Name(), i.Traits())
		}
		if len(BuiltFiles(i)) != len(BuiltFiles(d)) {
			t.Errorf("%s: an idle box lost the built files of its image", d.Name())
		}
		if ServerBinary(i) != "/bin/sleep" {
			t.Errorf("%s: an idle box's server binary is %q", d.Name(), ServerBinary(i))
		}
	}
}

// TestSecuredNodes: each node of a secured database's cluster carries the password and the
// node's own traits (a Cassandra node's longer readiness timeout).
func TestSecuredNodes(t *testing.T) {
	peers := []Peer{{Name: "n1", Host: "10.0.0.1"}, {Name: "n2", Host: "10.0.0.2"}, {Name: "n3", Host: "10.0.0.3"}}
	for _, d := range []DBMS{Redis{}, Etcd{}, Cassandra{}} {
		n, err := NodeOf(WithPassword(d, "pw"), Topology{Nodes: 3, ReplicationFactor: 1}, 1, peers)
		if err != nil {
			t.Fatal(err)
		}
		if n.Client().Password != "pw" {
			t.Errorf("%s: node 2 lost the password", d.Name())
		}
	}
	n, _ := NodeOf(WithPassword(Cassandra{}, "pw"), Topology{Nodes: 3, ReplicationFactor: 1}, 0, peers)
	if got := ReadyTimeout(n, time.Minute); got != 8*time.Minute {
		t.Errorf("a secured Cassandra node's ready timeout is %v, want 8m", got)
	}
	if got := ReadyTimeout(WithPassword(Cassandra{}, "pw"), time.Minute); got != cassandraReadyTimeout {
		t.Errorf("a secured Cassandra server's ready timeout is %v, want %v", got, cassandraReadyTimeout)
	}
	if _, err := NodeOf(WithPassword(MariaDB{}, "pw"), Topology{Nodes: 2}, 0, peers); err == nil {
		t.Error("MariaDB, which has no topology, gave a node")
	}
}
