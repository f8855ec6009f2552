// Package drivertest is the conformance suite of the driver contract (driver.DB), run by each
// driver's tests against a real server started by testkit/testdb (skipped, or failed in CI,
// by testkit/testenv's rules when the host cannot run it). Import it from tests only.
package drivertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testdb"
)

// Open is a driver's constructor (its New).
type Open func(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int) (driver.DB, error)

// Binding is what the suite needs to know of a driver.
type Binding struct {
	// DBMS is the server testdb starts (postgresql.PostgreSQL{}, etcd.Etcd{}, …).
	DBMS dbms.DBMS
	Open Open
	// Upsert says writes do not care whether the record exists (Redis's HSET, as in YCSB's
	// binding): Update of a missing key creates it and Insert of an existing key overwrites
	// it. Otherwise (SQL) the first returns ErrNotFound and the second fails.
	Upsert bool
	// HashOrder says a scan runs in the order of the keys' hashes (Cassandra's token order, as
	// in YCSB's binding), not of the keys: a scan from past the last key still finds records.
	HashOrder bool
	// Server, when set, returns the running server the suite uses instead of starting one
	// (a package that runs several suites on one slow-starting server).
	Server func(testing.TB) (platform.Box, dbms.DBMS)
	// FreshInserts makes BenchmarkOps time Insert for a binding without upserts too: each
	// iteration inserts a record under a new key ("new1", "new2", …), after the other
	// operations, so that the growing table does not slow them.
	FreshInserts bool
}

// open starts the binding's server (testdb.Start: torn down when the test ends) and opens a
// pool of poolSize connections to it.
func open(ctx context.Context, tb testing.TB, b Binding, poolSize int) (platform.Box, dbms.DBMS, driver.DB) {
	tb.Helper()
	var box platform.Box
	var d dbms.DBMS
	if b.Server != nil {
		box, d = b.Server(tb)
	} else {
		box, d = testdb.Start(tb, b.DBMS)
	}
	db, err := b.Open(ctx, box.Endpoint(), d.Client(), poolSize)
	if err != nil {
		tb.Fatal(err)
	}
	return box, d, db
}

// Conformance runs every operation of the driver contract against a real server.
func Conformance(t *testing.T, b Binding) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	box, d, db := open(ctx, t, b, 2)
	// Not YCSB's default name: a driver that forgets the table between processes fails below.
	tbl := driver.Table{Name: "bbtable", FieldCount: 3}
	fields := tbl.Fields()
	row := func(s string) [][]byte { return [][]byte{[]byte(s + "0"), []byte(s + "1"), []byte(s + "2")} }
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"user1", "user2", "user3"} {
		if err := db.Insert(ctx, k, fields, row(k)); err != nil {
			t.Fatalf("insert %s: %v", k, err)
		}
	}
	if err := db.BatchInsert(ctx, []string{"user4", "user5"}, fields, [][][]byte{row("a"), row("b")}); err != nil {
		t.Fatalf("batch insert: %v", err)
	}
	check := func(what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) && !(err == nil && want == nil) {
			t.Errorf("%s: %v, want %v", what, err, want)
		}
	}
	// The same values again, so the records stay as they were whichever way it goes.
	if err := db.Insert(ctx, "user1", fields, row("user1")); (err == nil) != b.Upsert {
		t.Errorf("insert existing: %v (upsert %v)", err, b.Upsert)
	}
	missing := driver.ErrNotFound
	if b.Upsert {
		missing = nil
	}
	check("read all", db.Read(ctx, "user3", nil), nil)
	check("read one", db.Read(ctx, "user5", fields[1:2]), nil)
	check("read missing", db.Read(ctx, "user9", nil), driver.ErrNotFound)
	check("update", db.Update(ctx, "user2", fields[:1], [][]byte{[]byte("new")}), nil)
	check("update all", db.Update(ctx, "user2", fields, row("x")), nil)
	check("update missing", db.Update(ctx, "user8", fields[:1], [][]byte{[]byte("new")}), missing)
	check("scan", db.Scan(ctx, "user2", 3, nil), nil)
	check("scan one field", db.Scan(ctx, "user1", 10, fields[2:]), nil)
	if !b.HashOrder {
		check("scan past the end", db.Scan(ctx, "user99", 3, nil), driver.ErrNotFound)
	}
	// A run whose load ran in another process (a seed): a new pool told the table, as the
	// generator tells it (UseTable, where the driver has a table name), reads the loaded data.
	other, err := b.Open(ctx, box.Endpoint(), d.Client(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if tu, ok := other.(interface{ UseTable(driver.Table) }); ok {
		tu.UseTable(tbl)
	}
	check("read from a pool opened after the load", other.Read(ctx, "user3", nil), nil)
	check("scan from a pool opened after the load", other.Scan(ctx, "user1", 2, nil), nil)
	other.Close()
	if err := db.Setup(ctx, tbl); err != nil { // recreates it empty
		t.Fatal(err)
	}
	check("read after setup", db.Read(ctx, "user3", nil), driver.ErrNotFound)
	check("close", db.Close(), nil)
	check("close again", db.Close(), nil)
	if err := db.Read(ctx, "user3", nil); err == nil {
		t.Error("read after close succeeded")
	}
}
