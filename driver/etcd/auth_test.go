package etcd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	etcddb "github.com/boxbench/boxbench/dbms/etcd"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/testkit/testdb"
)

// TestAuth runs against a real etcd with auth enabled (a run with a password): operations
// carry the token; a token the server refuses is replaced (re-authenticate, retry) without
// failing the operation; a wrong password fails New with etcd's reason; no password fails
// with etcd's.
func TestAuth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	box, d := testdb.Start(t, dbms.WithPassword(etcddb.Etcd{}, dbms.NewPassword()))
	cred := d.Client()
	if cred.Password == "" {
		t.Fatal("the secured dbms has no client password")
	}
	dbi, err := New(ctx, box.Endpoint(), cred, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer dbi.Close()
	db := dbi.(*DB)
	tbl := driver.Table{Name: "usertable", FieldCount: 2}
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := db.Insert(ctx, "user1", tbl.Fields(), [][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}

	c, err := db.pool.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.setToken([]byte("not-a-token.1"))
	db.pool.Put(c)
	if err := db.Read(ctx, "user1", nil); err != nil {
		t.Errorf("read with a refused token: %v, want a re-authentication and success", err)
	}
	if c, _ = db.pool.Get(ctx); string(c.token) == "not-a-token.1" || len(c.token) == 0 {
		t.Errorf("token after the retry: %q", c.token)
	}
	db.pool.Put(c)

	bad := cred
	bad.Password += "x"
	if _, err := New(ctx, box.Endpoint(), bad, 1); err == nil || !strings.Contains(err.Error(), "authentication failed") {
		t.Errorf("New with a wrong password: %v, want etcd's authentication failure", err)
	}
	var se *StatusError
	if _, err := New(ctx, box.Endpoint(), driver.Credentials{}, 1); !errors.As(err, &se) || !strings.Contains(se.Message, "user name is empty") {
		t.Errorf("New without credentials on a server with auth: %v, want etcd's refusal", err)
	}
}
