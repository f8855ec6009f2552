package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/boxbench/boxbench/dbms"
	cassandradb "github.com/boxbench/boxbench/dbms/cassandra"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/cassandra"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/testkit/testenv"
)

func needCassandra(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t)
	if err := dbms.Missing(cassandradb.Cassandra{}); err != nil {
		testenv.Skip(t, "cassandra is not built (make setup): "+err.Error())
	}
}

// TestCassandraRing starts a 3-node ring (replication factor 2) natively and in Docker on a
// cluster bridge, one ring per platform: the cluster reports every node NORMAL on one schema,
// the client (every node through Members) creates the keyspace with the ring's replication
// factor and writes and reads at ONE and QUORUM through every node, every node's JVM reports
// its heap over that window (dbms.Observer through the node's Exec), the facts carry the
// replication factor and the consistency, the default superuser is refused by every node, and
// teardown leaves nothing. (This was e2e.TestTopologyCassandra's ring, tested here once.)
func TestCassandraRing(t *testing.T) {
	needCassandra(t)
	cases := []struct {
		name, network string
		mk            func(t *testing.T) platform.Platform
	}{
		{"native", "host", func(t *testing.T) platform.Platform { return native.New() }},
		{"docker-bridge", "bridge-direct", func(t *testing.T) platform.Platform {
			testenv.NeedDocker(t)
			// The nodes find their seeds by name through the engine's DNS, which a swarm test's
			// init and leave would wipe (testenv.HoldShared).
			testenv.HoldShared(t, "swarm")
			engine, err := image.Connect()
			if err != nil {
				t.Fatal(err)
			}
			return docker.New(engine, nil)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.mk(t)
			exp := fmt.Sprintf("test-ring-%s-%d", tc.name, os.Getpid())
			work := testenv.WorkRoot(t)
			d := dbms.WithPassword(cassandradb.Cassandra{}, dbms.NewPassword())
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			topo := dbms.Topology{Nodes: 3, ReplicationFactor: 2, Consistency: "ONE"}
			start := time.Now()
			b, err := Provision(ctx, p, platform.Request{Experiment: exp, Run: "r0001",
				WorkDir: filepath.Join(work, exp, "r0001"), DBMS: d,
				Choice:    platform.Choice{Storage: "bind", Network: tc.network},
				Resources: resource.Limits{MemoryBytes: 1 << 30}}, topo)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ring of 3 ready in %s", time.Since(start).Round(time.Second))
			defer func() {
				if err := b.Teardown(context.Background()); err != nil {
					t.Error(err)
				}
				assertNothingLeft(t, exp, work)
			}()
			f := b.Facts()
			if f["cluster_members"] != "n1,n2,n3" || f["cluster_replication_factor"] != "2" || f["cluster_schema_version"] == "" ||
				f["cluster_consistency"] != "ONE" {
				t.Errorf("cluster facts: members %q rf %q schema %q consistency %q", f["cluster_members"], f["cluster_replication_factor"],
					f["cluster_schema_version"], f["cluster_consistency"])
			}
			ep := b.Endpoint()
			if len(ep.Members) != 3 {
				t.Fatalf("the client endpoint names %d members, want 3: %+v", len(ep.Members), ep)
			}
			cred := d.Client()
			// Every node's JVM is asked what it did over the writes and reads below
			// (dbms.Observer through the node's own Exec, natively and in its container), as the
			// runner asks each node of a cluster (runner.TestServerCountersPerNode names them).
			watches := watchNodes(ctx, t, b, d)
			tbl := driver.Table{Name: "usertable", FieldCount: 2}
			for _, cl := range []string{"ONE", "QUORUM"} {
				db, err := cassandra.Open(ctx, ep, cred, 2, cassandra.Options{Consistency: cl, ReplicationFactor: 2})
				if err != nil {
					t.Fatal(err)
				}
				if cl == "ONE" {
					if err := db.Setup(ctx, tbl); err != nil {
						t.Fatal(err)
					}
				} else {
					db.(*cassandra.DB).UseTable(tbl)
				}
				for i := range 30 {
					k := fmt.Sprintf("user%s%d", cl, i)
					if err := db.Insert(ctx, k, tbl.Fields(), [][]byte{[]byte("a"), []byte("b")}); err != nil {
						t.Fatalf("insert at %s: %v", cl, err)
					}
					// At QUORUM (W + R > RF) the write is read back at once. At ONE it may not
					// be: the write was acknowledged by one replica and the read may ask the
					// other before the write reaches it (Cassandra's eventual consistency), so
					// the read is retried for a bounded time.
					err := db.Read(ctx, k, nil)
					for tries := 0; err != nil && cl == "ONE" && errors.Is(err, driver.ErrNotFound) && tries < 50; tries++ {
						time.Sleep(100 * time.Millisecond)
						err = db.Read(ctx, k, nil)
					}
					if err != nil {
						t.Fatalf("read at %s: %v", cl, err)
					}
				}
				db.Close()
			}
			for i, w := range watches {
				win, err := w.End(ctx)
				if err != nil {
					t.Errorf("n%d: the observer's second reading: %v", i+1, err)
				} else if win.Metrics["server_heap_used_bytes"] <= 0 || win.Metrics["server_heap_max_bytes"] <= 0 || win.Span <= 0 {
					t.Errorf("n%d: heap %v of %v over a window of %s", i+1, win.Metrics["server_heap_used_bytes"],
						win.Metrics["server_heap_max_bytes"], win.Span)
				}
			}
			// Every node: the keyspace has the ring's replication factor, the rows are spread
			// over the nodes (each owns a share as coordinator's replica), and the default
			// superuser does not exist.
			for i, m := range ep.Members {
				s := session(ctx, t, m, cred)
				var repl map[string]string
				if err := s.Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'ycsb'").Scan(&repl); err != nil {
					t.Fatal(err)
				}
				if repl["replication_factor"] != "2" {
					t.Errorf("n%d: keyspace replication %v, want factor 2", i+1, repl)
				}
				s.Close()
				bad := driver.Credentials{User: "cassandra", Password: "cassandra"}
				if s, err := cassandradb.CQLSession(ctx, driver.Endpoint{Host: m.Host, Port: m.Port}, bad); err == nil {
					s.Close()
					t.Errorf("n%d accepted cassandra/cassandra", i+1)
				} else if !strings.Contains(err.Error(), "authentication") && !strings.Contains(err.Error(), "Provided username") {
					t.Logf("n%d refused cassandra/cassandra: %v", i+1, err)
				}
			}
		})
	}
}

// watchNodes starts the observer's window on every node of the ring b.
func watchNodes(ctx context.Context, t *testing.T, b platform.Box, d dbms.DBMS) []dbms.ServerWatch {
	t.Helper()
	o := dbms.ObserverOf(d)
	nodes := platform.NodesOf(b)
	if o == nil || len(nodes) != 3 {
		t.Fatalf("observer %v, %d nodes: want Cassandra's observer on 3", o, len(nodes))
	}
	var ws []dbms.ServerWatch
	for _, n := range nodes {
		w, err := o.Watch(ctx, dbms.ServerAccess{Endpoint: n.Box.Endpoint(), Credentials: d.Client(), Exec: n.Box.Exec})
		if err != nil {
			t.Fatalf("%s: the observer's first reading: %v", n.Name, err)
		}
		ws = append(ws, w)
	}
	return ws
}

// session opens a gocql session on the ring's node ep: its startup may take until ctx's
// deadline (cassandradb.CQLSession), for a node of three JVMs on a loaded 2-vCPU host took more than
// gocql's 5 s to answer a new connection in CI once (2026-11-28) while it was healthy.
func session(ctx context.Context, t *testing.T, ep driver.Endpoint, c driver.Credentials) *gocql.Session {
	t.Helper()
	s, err := cassandradb.CQLSession(ctx, driver.Endpoint{Host: ep.Host, Port: ep.Port}, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCassandraFailedJoin starts a 3-node ring natively whose third node is given a storage
// (internode) port something else already listens on: the provision fails naming n3 with
// n3's own log, and the two nodes that did start are torn down.
func TestCassandraFailedJoin(t *testing.T) {
	needCassandra(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	taken := held.Addr().(*net.TCPAddr).Port
	// place asks for ports node by node, in listener-name order (client, storage): the sixth
	// is n3's storage port.
	var calls atomic.Int32
	reservePort = func() (int, error) {
		if calls.Add(1) == 6 {
			return taken, nil
		}
		return platform.FreePort()
	}
	defer func() { reservePort = platform.FreePort }()
	exp := fmt.Sprintf("test-ringfail-%d", os.Getpid())
	work := testenv.WorkRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	b, err := Provision(ctx, native.New(), platform.Request{Experiment: exp, Run: "r0001",
		WorkDir: filepath.Join(work, exp, "r0001"), DBMS: dbms.WithPassword(cassandradb.Cassandra{}, dbms.NewPassword()),
		Choice:    platform.Choice{Storage: "bind", Network: "host"},
		Resources: resource.Limits{MemoryBytes: 1 << 30}}, dbms.Topology{Nodes: 3, ReplicationFactor: 2})
	if err == nil {
		_ = b.Teardown(ctx)
		t.Fatal("a node on a taken storage port joined")
	}
	msg := err.Error()
	if !strings.Contains(msg, "node n3") || !strings.Contains(msg, strconv.Itoa(taken)) {
		t.Errorf("the error does not name n3 and its log's reason (port %d):\n%s", taken, msg)
	}
	if strings.Contains(msg, "node n1 did not") || strings.Contains(msg, "node n2 did not") {
		t.Errorf("the error blames a node that was fine:\n%s", msg)
	}
	t.Logf("failed join: %s", msg)
	assertNothingLeft(t, exp, work)
}
