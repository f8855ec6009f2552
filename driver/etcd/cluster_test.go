package etcd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxbench/boxbench/cluster"
	"github.com/boxbench/boxbench/dbms"
	etcddb "github.com/boxbench/boxbench/dbms/etcd"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestCluster runs against a real 3-member etcd cluster (package cluster, natively, with a
// password): a pool of 3 connections has one on each member, and a record written through
// one member is read through every member (linearizable reads).
func TestCluster(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "etcd", "setpriv")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var d dbms.DBMS = etcddb.Etcd{}
	d = dbms.WithPassword(d, dbms.NewPassword())
	exp := fmt.Sprintf("test-etcdcluster-%d", os.Getpid())
	b, err := cluster.Provision(ctx, native.New(), platform.Request{Experiment: exp, Run: "r0001",
		WorkDir: filepath.Join(testenv.WorkRoot(t), exp, "r0001"), DBMS: d,
		Choice: platform.Choice{Storage: "bind", Network: "host"}}, dbms.Topology{Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Teardown(context.Background()); err != nil {
			t.Errorf("teardown: %v", err)
		}
		_ = cgroup.At("/boxbench/" + exp).Remove()
	})
	ep := b.Endpoint()
	if len(ep.Members) != 3 {
		t.Fatalf("endpoint %+v: want 3 members", ep)
	}
	dbi, err := New(ctx, ep, d.Client(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer dbi.Close()
	db := dbi.(*DB)
	tbl := driver.Table{Name: "usertable", FieldCount: 3}
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	// Take all three connections at once: the pool dials the two it has not yet.
	var cs []*client
	seen := map[string]bool{}
	for range 3 {
		c, err := db.pool.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
		seen[c.authority] = true
	}
	for _, m := range ep.Members {
		if a := tcpTarget(m).authority; !seen[a] {
			t.Errorf("no connection to member %s (connections to %v)", a, seen)
		}
	}
	// Write through the first, read through each.
	vals := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	if err := db.do(ctx, cs[0], mTxn, appendTxns(cs[0], tbl, "user1", vals)); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		c.key = append(c.key[:0], "usertable/user1/FIELD2"...)
		if err := db.rangeCall(ctx, c, appendRange(c.request(), c.key, nil, 0)); err != nil {
			t.Errorf("read through %s: %v", c.authority, err)
		}
	}
	for _, c := range cs {
		db.pool.Put(c)
	}
	if err := db.Scan(ctx, "user0", 5, nil); err != nil {
		t.Errorf("scan: %v", err)
	}
}

func appendTxns(c *client, tbl driver.Table, key string, vals [][]byte) []byte {
	msg := c.request()
	c.key = newTable(tbl).recordKey(c.key[:0], key)
	for i, f := range tbl.Fields() {
		msg = appendTxnPut(msg, c.key, f, vals[i])
	}
	return msg
}
