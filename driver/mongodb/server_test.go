package mongodb

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms/ferretdb"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/testkit/testdb"
)

// TestAgainstServer checks, against a real FerretDB, what the conformance suite cannot see
// through the driver contract: the documents a find returns (count, projection, order), write
// and command errors decoded with their codes, and batch inserts split across commands.
func TestAgainstServer(t *testing.T) {
	box, d := testdb.Start(t, ferretdb.FerretDB{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ddb, err := New(ctx, box.Endpoint(), d.Client(), 1)
	if err != nil {
		t.Fatal(err)
	}
	db := ddb.(*DB)
	defer db.Close()
	tbl := driver.Table{Name: "servertable", FieldCount: 3}
	fields := tbl.Fields()
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := db.Setup(ctx, tbl); err != nil { // dropping a collection that is gone
		t.Fatalf("setup twice: %v", err)
	}

	// 150 records, in commands of at most 7 documents (maxWriteBatchSize lowered), in reverse
	// key order so that a scan's sort matters.
	const n = 150
	keys := make([]string, n)
	rows := make([][][]byte, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("user%03d", n-1-i)
		rows[i] = [][]byte{[]byte("a" + keys[i]), []byte("b" + keys[i]), []byte("c" + keys[i])}
	}
	withConn(t, db, func(c *conn) { c.maxBatch = 7 })
	if err := db.BatchInsert(ctx, keys, fields, rows); err != nil {
		t.Fatalf("batch insert: %v", err)
	}
	withConn(t, db, func(c *conn) { c.maxBatch = 100_000 })

	// A scan of 120 (more than FerretDB's default batch of 101) from user010 returns 120
	// documents in _id order, each with _id and the projected field only.
	withConn(t, db, func(c *conn) {
		c.find(tbl.Name, db.db, "user010", true, 120, fields[1:2])
		r, err := db.roundTrip(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if r.cursor != 0 {
			t.Errorf("cursor %d left open, want 0 (single batch)", r.cursor)
		}
		docs, _ := r.batch.Values()
		if len(docs) != 120 {
			t.Fatalf("%d documents, want 120", len(docs))
		}
		for i, v := range docs {
			doc := v.Document()
			id := fmt.Sprintf("user%03d", 10+i)
			if got := doc.Lookup("_id").StringValue(); got != id {
				t.Fatalf("document %d: _id %s, want %s", i, got, id)
			}
			els, _ := doc.Elements()
			_, val := doc.Lookup("FIELD1").Binary()
			if len(els) != 2 || string(val) != "b"+id {
				t.Fatalf("document %d: %s, want _id and FIELD1 only", i, doc)
			}
		}
	})
	// A read returns the record with all its fields.
	withConn(t, db, func(c *conn) {
		c.find(tbl.Name, db.db, "user042", false, 1, nil)
		r, err := db.roundTrip(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		docs, _ := r.batch.Values()
		if len(docs) != 1 {
			t.Fatalf("%d documents, want 1", len(docs))
		}
		_, v := docs[0].Document().Lookup("FIELD2").Binary()
		if els, _ := docs[0].Document().Elements(); len(els) != 4 || string(v) != "cuser042" {
			t.Errorf("read: %s", docs[0].Document())
		}
	})

	// A duplicate key is a write error with its code; in an ordered batch it stops the batch
	// and its index is the record's position in keys.
	err = db.Insert(ctx, "user005", fields, rows[0])
	var we *WriteError
	if !errors.As(err, &we) || we.Code != CodeDuplicateKey || we.Index != 0 {
		t.Errorf("duplicate insert: %#v, want a write error with code %d", err, CodeDuplicateKey)
	}
	withConn(t, db, func(c *conn) { c.maxBatch = 2 })
	err = db.BatchInsert(ctx, []string{"new1", "new2", "user007", "new3"}, fields, rows[:4])
	withConn(t, db, func(c *conn) { c.maxBatch = 100_000 })
	if !errors.As(err, &we) || we.Code != CodeDuplicateKey || we.Index != 2 {
		t.Errorf("batch with a duplicate: %#v, want a write error at index 2", err)
	}
	for k, want := range map[string]error{"new2": nil, "new3": driver.ErrNotFound} {
		if err := db.Read(ctx, k, nil); !errors.Is(err, want) {
			t.Errorf("read %s after the failed batch: %v, want %v", k, err, want)
		}
	}

	// {ok: 0}: a command error, with code and name; the connection stays usable.
	db.UseTable(driver.Table{Name: "bad$name"})
	err = db.Read(ctx, "user001", nil)
	var se *ServerError
	if !errors.As(err, &se) || se.Code == 0 || se.Message == "" {
		t.Errorf("find on an invalid collection name: %#v, want a server error with a code", err)
	}
	t.Logf("invalid name: %v", err)
	db.UseTable(tbl)
	if err := db.Read(ctx, "user001", nil); err != nil {
		t.Errorf("read after a command error: %v", err)
	}
	if err := db.Setup(ctx, driver.Table{Name: "a\x00b"}); err == nil {
		t.Error("setup with a NUL in the name succeeded")
	}
	if err := db.Read(ctx, "user001", []string{"F\x00"}); err == nil {
		t.Error("a field name with a NUL was sent")
	}
}

// withConn runs f on the pool's connection (the pool has one).
func withConn(t *testing.T, db *DB, f func(*conn)) {
	t.Helper()
	c, err := db.pool.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer db.pool.Put(c)
	f(c)
}
