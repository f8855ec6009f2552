package cassandra

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	cassandradb "github.com/boxbench/boxbench/dbms/cassandra"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/cassandra/cql"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/drivertest"
	"github.com/boxbench/boxbench/testkit/testdb"
)

// binding is what the shared driver tests (drivertest) need to know of this driver: CQL writes
// are upserts, and scans run in token order (YCSB's Cassandra binding).
var binding = drivertest.Binding{DBMS: cassandradb.Cassandra{}, Open: New, Upsert: true, HashOrder: true}

// TestServer runs every test that needs a server against ONE Cassandra (it takes tens of
// seconds to start on a loaded host), which requires a password (PasswordAuthenticator), as
// a run's does: the conformance suite, the tokens the server computes, the errors, and last
// the stopped-server suite (it pauses the server).
func TestServer(t *testing.T) {
	box, d := testdb.Start(t, dbms.WithPassword(cassandradb.Cassandra{}, dbms.NewPassword()))
	b := binding
	b.Server = func(testing.TB) (platform.Box, dbms.DBMS) { return box, d }
	t.Run("operations", func(t *testing.T) { drivertest.Conformance(t, b) })
	t.Run("tokens", func(t *testing.T) { testTokens(t, box.Endpoint(), d.Client()) })
	t.Run("auth", func(t *testing.T) { testAuth(t, box.Endpoint(), d.Client()) })
	t.Run("errors", func(t *testing.T) { testErrors(t, box.Endpoint(), d.Client()) })
	t.Run("stopped", func(t *testing.T) { drivertest.StoppedServer(t, b) })
}

// testTokens: the client's Murmur3 token of a key is the server's token(y_id), for keys of
// every tail length and with bytes ≥ 0x80 (Cassandra reads them as signed), and a key is
// routed to the node that owns it.
func testTokens(t *testing.T, ep driver.Endpoint, cred driver.Credentials) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := New(ctx, ep, cred, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cdb := db.(*DB)
	if err := cdb.Setup(ctx, driver.Table{Name: "tokentable", FieldCount: 1}); err != nil {
		t.Fatal(err)
	}
	keys := []string{"", "user1", "user6284781860667377211", "ü", "日本語のキー"}
	for n := 1; n <= 40; n++ {
		k := make([]byte, n)
		for i := range k {
			k[i] = byte('a' + (i*7+n)%26)
			if i%5 == 4 {
				k[i] = 0xc3 // with the next byte a two-byte UTF-8 character: a byte ≥ 0x80 in every position
			}
			if i%5 == 0 && i > 0 && k[i-1] == 0xc3 {
				k[i] = 0xa9
			}
		}
		if k[n-1] == 0xc3 {
			k[n-1] = 'z'
		}
		keys = append(keys, string(k))
	}
	c, err := cdb.nodes[0].pool.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cdb.nodes[0].pool.Put(c)
	for _, k := range keys {
		c.begin()
		c.bindString(k)
		if _, err := c.execute(ctx, "SELECT token(?) FROM system.local", cql.One); err != nil {
			t.Fatalf("token(%q): %v", k, err)
		}
		// execute skipped the metadata: the one value is the row's first.
		r := cql.Reader{B: c.body}
		r.Int()
		if _, rows, err := cql.Rows(&r); err != nil || rows != 1 {
			t.Fatalf("token(%q): %d rows, %v", k, rows, err)
		}
		v := r.Bytes()
		if len(v) != 8 {
			t.Fatalf("token(%q): %d bytes", k, len(v))
		}
		server := int64(uint64(v[0])<<56 | uint64(v[1])<<48 | uint64(v[2])<<40 | uint64(v[3])<<32 |
			uint64(v[4])<<24 | uint64(v[5])<<16 | uint64(v[6])<<8 | uint64(v[7]))
		t.Logf("token %q %d", k, server)
		if got := cql.Token(k); got != server {
			t.Errorf("Token(%q) = %d, the server's token is %d", k, got, server)
		}
	}
	// The ring of this one node: every key to node 0, the one whose tokens system.local lists.
	if n := cdb.ring.node("user1"); n != 0 {
		t.Errorf("one node: user1 routed to node %d", n)
	}
}

// testAuth: a wrong password and a missing one are refused with an error that says so.
func testAuth(t *testing.T, ep driver.Endpoint, cred driver.Credentials) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bad := cred
	bad.Password = "wrong"
	_, err := New(ctx, ep, bad, 1)
	var ce *cql.Error
	if err == nil || !errors.As(err, &ce) || ce.Code != cql.CodeBadCredentials ||
		!strings.Contains(err.Error(), `authentication as "boxbench"`) {
		t.Errorf("wrong password: %v, want a bad credentials error (0x0100) naming the role", err)
	}
	t.Logf("wrong password: %v", err)
	none := cred
	none.Password = ""
	if _, err := New(ctx, ep, none, 1); err == nil || !strings.Contains(err.Error(), "requires authentication") {
		t.Errorf("no password: %v, want 'requires authentication'", err)
	}
}

// testErrors: a server error keeps its code (errors.As), a broken statement does not break
// the connection, and concurrent workers share the pool.
func testErrors(t *testing.T, ep driver.Endpoint, cred driver.Credentials) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := New(ctx, ep, cred, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := driver.Table{Name: "errtable", FieldCount: 2}
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	err = db.Read(ctx, "k", []string{"NOSUCH"})
	var ce *cql.Error
	if !errors.As(err, &ce) || ce.Code != cql.CodeInvalid {
		t.Errorf("read of a missing column: %v, want an invalid-request error (0x2200)", err)
	}
	// A statement id the server does not know (as after a restart) is prepared again.
	cdb := db.(*DB)
	c, err := cdb.nodes[0].pool.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q := cdb.st.Load().readAll
	if _, err := c.prepared(ctx, q); err != nil {
		t.Fatal(err)
	}
	bogus := []byte{0xde, 0xad, 0xbe, 0xef}
	c.prep[q] = bogus
	c.begin()
	c.bindString("nokey")
	if n, err := c.execute(ctx, q, cql.One); err != nil || n != 0 || string(c.prep[q]) == string(bogus) {
		t.Errorf("execute of an unknown id: %d rows, %v; id %x", n, err, c.prep[q])
	}
	cdb.nodes[0].pool.Put(c)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				k := "w" + string(rune('a'+w)) + string(rune('a'+i))
				if err := db.Insert(ctx, k, tbl.Fields(), [][]byte{[]byte(k), []byte("v")}); err != nil {
					errs <- err
					return
				}
				if err := db.Read(ctx, k, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent workers: %v", err)
	}
	// A batch larger than a chunk, with the statement forgotten by the server in between
	// (Setup recreates the table): every row is there afterwards.
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 2*batchChunk+3)
	vals := make([][][]byte, len(keys))
	for i := range keys {
		keys[i] = "b" + strings.Repeat("x", i)
		vals[i] = [][]byte{[]byte("a"), []byte("b")}
	}
	if err := db.BatchInsert(ctx, keys, tbl.Fields(), vals); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := db.Read(ctx, k, nil); err != nil {
			t.Fatalf("read %q after the batch: %v", k, err)
		}
	}
}
