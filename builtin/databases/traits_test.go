package databases

import (
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
)

// TestWrappersKeepTraits, for every database of the table: a wrapper embeds the database and
// changes only the traits it means to: WithPassword keeps every trait (and secures each cluster
// node), Idle keeps only the built files. Before traits were data, each capability had its own
// unwrap loop and they disagreed.
func TestWrappersKeepTraits(t *testing.T) {
	for _, d := range DBMSs() {
		s := dbms.WithPassword(d, "pw")
		if (dbms.ObserverOf(s) == nil) != (dbms.ObserverOf(d) == nil) {
			t.Errorf("%s: WithPassword changed the observer", d.Name())
		}
		if _, ok := dbms.ClusteredOf(s); ok != (d.Traits().Clustered != nil) {
			t.Errorf("%s: WithPassword changed the cluster side", d.Name())
		}
		if dbms.ServerBinary(s) != dbms.ServerBinary(d) || len(dbms.BuiltFiles(s)) != len(dbms.BuiltFiles(d)) {
			t.Errorf("%s: WithPassword changed the server binary or the built files", d.Name())
		}
		if dbms.ReadyTimeout(s, time.Second) != dbms.ReadyTimeout(d, time.Second) {
			t.Errorf("%s: WithPassword changed the ready timeout", d.Name())
		}
		i := dbms.Idle(d)
		if dbms.ObserverOf(i) != nil || i.Traits().Clustered != nil || dbms.ReadyTimeout(i, time.Second) != time.Second {
			t.Errorf("%s: an idle box kept a trait that needs the server: %+v", d.Name(), i.Traits())
		}
		if len(dbms.BuiltFiles(i)) != len(dbms.BuiltFiles(d)) {
			t.Errorf("%s: an idle box lost the built files of its image", d.Name())
		}
		if dbms.ServerBinary(i) != "/bin/sleep" {
			t.Errorf("%s: an idle box's server binary is %q", d.Name(), dbms.ServerBinary(i))
		}
	}
}

// TestSecuredNodes, for every database of the table: each node of a secured database's
// cluster carries the password; a database without a cluster side gives no node.
func TestSecuredNodes(t *testing.T) {
	peers := []dbms.Peer{{Name: "n1", Host: "10.0.0.1"}, {Name: "n2", Host: "10.0.0.2"}, {Name: "n3", Host: "10.0.0.3"}}
	for _, d := range DBMSs() {
		n, err := dbms.NodeOf(dbms.WithPassword(d, "pw"), dbms.Topology{Nodes: 3, ReplicationFactor: 1}, 1, peers)
		if _, ok := dbms.ClusteredOf(d); !ok {
			if err == nil {
				t.Errorf("%s, which has no topology, gave a node", d.Name())
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n.Client().Password != "pw" {
			t.Errorf("%s: node 2 lost the password", d.Name())
		}
	}
}

// TestScansPerKeyComplete: a database that offers the full-scan warning gives it a code and a
// reason (the check raises it with both; it never names the database).
func TestScansPerKeyComplete(t *testing.T) {
	for _, d := range DBMSs() {
		if s := d.Traits().ScansPerKey; s != nil && (s.Code == "" || s.Why == "") {
			t.Errorf("%s: ScansPerKey %+v lacks its code or its reason", d.Name(), s)
		}
	}
}
