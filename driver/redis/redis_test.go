package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/testdb"
)

// TestOperations runs every operation of the driver contract against a real server.
func TestOperations(t *testing.T) {
	box, d := testdb.Start(t, "redis")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := New(ctx, box.Endpoint(), d.Client(), 2)
	if err != nil {
		t.Fatal(err)
	}
	tbl := driver.Table{Name: "usertable", FieldCount: 3}
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
	check("read all", db.Read(ctx, "user3", nil), nil)
	check("read one", db.Read(ctx, "user5", fields[1:2]), nil)
	check("read missing", db.Read(ctx, "user9", nil), driver.ErrNotFound)
	check("update", db.Update(ctx, "user2", fields[:1], [][]byte{[]byte("new")}), nil)
	check("update all", db.Update(ctx, "user2", fields, row("x")), nil)
	// Redis: HSET creates the record, as in YCSB's binding (see Update).
	check("update missing", db.Update(ctx, "user8", fields[:1], [][]byte{[]byte("new")}), nil)
	check("scan", db.Scan(ctx, "user2", 3, nil), nil)
	check("scan one field", db.Scan(ctx, "user1", 10, fields[2:]), nil)
	check("scan past the end", db.Scan(ctx, "user99", 3, nil), driver.ErrNotFound)
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
