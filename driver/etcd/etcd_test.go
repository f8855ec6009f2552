package etcd

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/testkit/testdb"

	etcddb "github.com/boxbench/boxbench/dbms/etcd"
	"github.com/boxbench/boxbench/testkit/drivertest"
)

// binding is what the shared driver tests (drivertest) need to know of this driver.
var binding = drivertest.Binding{
	DBMS: etcddb.Etcd{},
	Open: New,
	// A put creates a missing key and overwrites an existing one (see the package comment).
	Upsert: true,
}

// TestOperations runs every operation of the driver contract against a real server.
func TestOperations(t *testing.T) { drivertest.Conformance(t, binding) }

// TestStoppedServer: against a stopped server, an operation whose context ends returns the
// context's error, and Close breaks an operation that has no deadline (the generator's way of
// ending a run); after the server resumes, the client reconnects.
func TestStoppedServer(t *testing.T) { drivertest.StoppedServer(t, binding) }

// TestLargeBatch: a load batch larger than one transaction may be (in operations or bytes) is
// split, and every record arrives.
func TestLargeBatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	box, d := testdb.Start(t, etcddb.Etcd{})
	db, err := New(ctx, box.Endpoint(), d.Client(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := driver.Table{Name: "usertable", FieldCount: 4}
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	// 300 records of 4 × 2000 bytes: 2.4 MB and 1200 puts, over both limits.
	keys := make([]string, 300)
	vals := make([][][]byte, len(keys))
	for i := range keys {
		keys[i] = fmt.Sprintf("user%04d", i)
		vals[i] = [][]byte{bytes.Repeat([]byte{'a'}, 2000), bytes.Repeat([]byte{'b'}, 2000),
			bytes.Repeat([]byte{'c'}, 2000), bytes.Repeat([]byte{'d'}, 2000)}
	}
	if err := db.BatchInsert(ctx, keys, tbl.Fields(), vals); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{keys[0], keys[150], keys[299]} {
		if err := db.Read(ctx, k, nil); err != nil {
			t.Errorf("read %s: %v", k, err)
		}
	}
}
