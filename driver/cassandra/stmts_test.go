package cassandra

import (
	"testing"

	"github.com/boxbench/boxbench/driver"
)

// TestStatements: YCSB's Cassandra binding's CQL, prebuilt for all fields and for one, built
// per call for other sets.
func TestStatements(t *testing.T) {
	s := newStmts("ycsb", driver.Table{Name: "UserTable", FieldCount: 3})
	f := s.fields
	for _, tc := range []struct{ got, want string }{
		{s.pick(nil, s.readAll, s.readOne, s.read), "SELECT * FROM ycsb.usertable WHERE y_id = ?"},
		{s.pick(f[1:2], s.readAll, s.readOne, s.read), "SELECT field1 FROM ycsb.usertable WHERE y_id = ?"},
		{s.pick(f[:2], s.readAll, s.readOne, s.read), "SELECT field0, field1 FROM ycsb.usertable WHERE y_id = ?"},
		{s.pick(nil, s.scanAll, s.scanOne, s.scan), "SELECT * FROM ycsb.usertable WHERE token(y_id) >= token(?) LIMIT ?"},
		{s.pick(f, s.updateAll, s.updateOne, s.update), "UPDATE ycsb.usertable SET field0 = ?, field1 = ?, field2 = ? WHERE y_id = ?"},
		{s.pick(f[2:], s.updateAll, s.updateOne, s.update), "UPDATE ycsb.usertable SET field2 = ? WHERE y_id = ?"},
		{s.pick(f, s.insertAll, nil, s.insert), "INSERT INTO ycsb.usertable (y_id, field0, field1, field2) VALUES (?, ?, ?, ?)"},
		{s.pick(f[:1], s.insertAll, nil, s.insert), "INSERT INTO ycsb.usertable (y_id, field0) VALUES (?, ?)"},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
}

// TestConsistency: a level the spec names is parsed before connecting; a wrong one says which
// are valid.
func TestConsistency(t *testing.T) {
	_, err := Open(t.Context(), driver.Endpoint{Host: "127.0.0.1", Port: 1}, driver.Credentials{}, 1, Options{Consistency: "QUORUMS"})
	if err == nil || err.Error() != `cassandra: consistency "QUORUMS" (valid: ANY, ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, LOCAL_ONE)` {
		t.Errorf("bad consistency: %v", err)
	}
}
