package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	etcddb "github.com/boxbench/boxbench/dbms/etcd"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/testkit/testdb"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestUnixSocket: `network: unix` reaches etcd's unix listener (HTTP/2 on a unix socket,
// authority "localhost"), with a password.
func TestUnixSocket(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "etcd", "setpriv")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var d dbms.DBMS = etcddb.Etcd{}
	b, d := testdb.StartOn(t, dbms.WithPassword(d, dbms.NewPassword()), "unix")
	ep := b.Endpoint()
	if ep.Unix == "" {
		t.Fatalf("endpoint %+v is not a unix socket", ep)
	}
	db, err := New(ctx, ep, d.Client(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := driver.Table{Name: "usertable", FieldCount: 2}
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := db.Insert(ctx, "user1", tbl.Fields(), [][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Read(ctx, "user1", nil); err != nil {
		t.Errorf("read: %v", err)
	}
	if err := db.Read(ctx, "user2", nil); err != driver.ErrNotFound {
		t.Errorf("read of a missing record: %v, want ErrNotFound", err)
	}
}
