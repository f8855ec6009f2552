// Package cassandra drives Apache Cassandra (`dbms: cassandra`) over CQL with boxbench's own
// native-protocol client (package cql for the frames), in the data model of YCSB's Cassandra
// binding: keyspace ycsb, one table whose partition key is y_id varchar and whose other
// columns are field0..n varchar.
//
//   - read: SELECT <fields> FROM t WHERE y_id = ? (all columns when fields is nil); no row is
//     ErrNotFound.
//   - scan: SELECT <fields> FROM t WHERE token(y_id) >= token(?) LIMIT ?, YCSB's scan: in token
//     (hash) order, not key order, so a scan from a key past the last one still finds rows.
//   - update: UPDATE t SET f = ?, … WHERE y_id = ?; insert: INSERT INTO t (y_id, f…) VALUES
//     (?, …). Both are upserts in CQL, as in YCSB's binding (no lightweight transactions).
//   - batch insert: the rows' prepared inserts pipelined on one connection, one stream each,
//     one write and the replies read as they come (a CQL BATCH over many partitions is an
//     anti-pattern Cassandra warns about past 10 partitions and refuses over 50 KiB).
//
// Every statement is prepared once per connection (ids are per node) and executed by id at
// the configured consistency level (ONE by default, as in YCSB), asking the server to skip
// the result metadata: the client only counts rows. A connection is one worker's, one
// request in flight, so a round trip is one write and one read system call (netconn), and an
// operation encodes into reused buffers and decodes in place: the hot path allocates nothing.
//
// Several nodes: the client connects to every member of the endpoint (a ring, package
// cluster), reads each node's tokens from its own system.local, and sends each request to the
// node that owns its key's token (Murmur3, as the server computes it: a replica of the key,
// its coordinator needs no hop for consistency ONE).
//
// It replaced gocql (github.com/apache/cassandra-gocql-driver/v2), which allocated 28-42
// objects per operation (docs/performance.md).
package cassandra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/cassandra/cql"
	"github.com/boxbench/boxbench/driver/internal/netconn"
	"github.com/boxbench/boxbench/driver/internal/pool"
)

// Consistencies are the consistency levels a spec may name.
var Consistencies = func() []string {
	n := make([]string, len(cql.Consistencies))
	for i, c := range cql.Consistencies {
		n[i] = c.Name
	}
	return n
}()

// Options are the client's settings from the spec.
type Options struct {
	// Consistency is the level of every operation (one of Consistencies; "" = ONE).
	Consistency string
	// ReplicationFactor is the keyspace's (SimpleStrategy), set by Setup; 0 = 1.
	ReplicationFactor int
}

// DB is a pool of connections per node. Safe for concurrent use.
type DB struct {
	nodes    []node
	ring     *ring
	cl       cql.Consistency
	rf       int
	ks       string
	user, pw string
	st       atomic.Pointer[stmts]
	conns    netconn.Conns
	once     sync.Once
}

// node is one member of the ring and its connections.
type node struct {
	ep   driver.Endpoint
	pool *pool.Pool[conn]
}

var _ driver.DB = (*DB)(nil)

// New connects to ep (every member of it) with up to poolSize connections per node at
// consistency ONE and checks the servers answer; ctx bounds the check.
func New(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int) (driver.DB, error) {
	return Open(ctx, ep, cred, poolSize, Options{})
}

// Opener returns a constructor with the spec's options.
func Opener(o Options) func(context.Context, driver.Endpoint, driver.Credentials, int) (driver.DB, error) {
	return func(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int) (driver.DB, error) {
		return Open(ctx, ep, cred, poolSize, o)
	}
}

// Open is New with options.
func Open(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int, o Options) (driver.DB, error) {
	cl := cql.One
	var errs []error
	if o.Consistency != "" {
		c, ok := cql.ParseConsistency(strings.ToUpper(o.Consistency))
		if !ok {
			errs = append(errs, fmt.Errorf("cassandra: consistency %q (valid: %s)", o.Consistency, strings.Join(Consistencies, ", ")))
		}
		cl = c
	}
	if o.ReplicationFactor < 0 {
		errs = append(errs, fmt.Errorf("cassandra: replication factor %d (valid: 1 or more; 0 = 1)", o.ReplicationFactor))
	}
	members := ep.Members
	if len(members) == 0 {
		members = []driver.Endpoint{ep}
	}
	for _, m := range members {
		if m.Unix != "" || m.Host == "" || m.Port <= 0 || m.Port > 65535 {
			errs = append(errs, fmt.Errorf("cassandra: endpoint %s: CQL needs a host and a port (1-65535), no unix socket", m))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	db := &DB{cl: cl, rf: max(1, o.ReplicationFactor), ks: cred.Database, user: cred.User, pw: cred.Password,
		nodes: make([]node, len(members)), ring: &ring{}}
	db.st.Store(newStmts(db.ks, driver.Table{Name: "usertable", FieldCount: 10}))
	var vs []vnode
	for i, m := range members {
		db.nodes[i].ep = driver.Endpoint{Host: m.Host, Port: m.Port}
		c, err := db.dial(ctx, i)
		if err == nil {
			err = c.query(ctx, "SELECT tokens FROM system.local", cql.One)
		}
		var t []vnode
		if err == nil {
			t, err = nodeTokens(c, i)
		}
		if c != nil {
			db.nodes[i].pool = pool.New(poolSize, c, func(ctx context.Context) (*conn, error) { return db.dial(ctx, i) },
				func(c *conn) bool { return c.broken }, func(c *conn) { c.nc.Close() }, errPoolClosed)
		}
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("cassandra %s: %w", m, err)
		}
		vs = append(vs, t...)
	}
	if len(members) > 1 {
		r, err := newRing(vs)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("cassandra %s: ring: %w", ep, err)
		}
		db.ring = r
	}
	return db, nil
}

// dial opens one connection to node i and starts it (handshake).
func (db *DB) dial(ctx context.Context, i int) (*conn, error) {
	nc, err := db.conns.Dial(ctx, "tcp", db.nodes[i].ep.String())
	if err != nil {
		return nil, err
	}
	c := newConn(nc, i)
	if err := c.handshake(ctx, db.user, db.pw); err != nil {
		c.nc.Close()
		return nil, err
	}
	return c, nil
}

// UseTable names the table the following operations use; Setup does it too.
func (db *DB) UseTable(t driver.Table) { db.st.Store(newStmts(db.ks, t)) }

// Setup creates YCSB's keyspace (SimpleStrategy, the options' replication factor) or sets its
// factor, and the table, empty; with several nodes it then waits until they agree on the
// schema, so that every node knows the new table.
func (db *DB) Setup(ctx context.Context, t driver.Table) error {
	name := strings.ToLower(t.Name)
	if !ident.MatchString(name) || !ident.MatchString(db.ks) {
		return fmt.Errorf("cassandra: table %q or keyspace %q is not a CQL identifier ([a-z_][a-z0-9_]*, at most 48)", t.Name, db.ks)
	}
	cols := make([]string, 0, t.FieldCount+1)
	cols = append(cols, "y_id varchar PRIMARY KEY")
	for _, f := range t.Fields() {
		cols = append(cols, column(f)+" varchar")
	}
	repl := " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': " + strconv.Itoa(db.rf) + "}"
	c, err := db.nodes[0].pool.Get(ctx)
	if err != nil {
		return db.wrap(ctx, err)
	}
	for _, q := range []string{
		"CREATE KEYSPACE IF NOT EXISTS " + db.ks + repl,
		"ALTER KEYSPACE " + db.ks + repl,
		"DROP TABLE IF EXISTS " + db.ks + "." + name,
		"CREATE TABLE " + db.ks + "." + name + " (" + strings.Join(cols, ", ") + ")",
	} {
		if err = c.query(ctx, q, cql.All); err != nil {
			err = fmt.Errorf("%s: %w", q, err)
			break
		}
	}
	db.nodes[0].pool.Put(c)
	if err == nil && len(db.nodes) > 1 {
		err = db.agree(ctx)
	}
	if err != nil {
		return db.wrap(ctx, err)
	}
	db.UseTable(t)
	return nil
}

// agreeTimeout bounds the wait for schema agreement (the drivers' usual 10 s, longer for a
// loaded host).
const agreeTimeout = 60 * time.Second

// agree waits until every node reports the same schema version.
func (db *DB) agree(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, agreeTimeout)
	defer cancel()
	versions := make([]string, len(db.nodes))
	for {
		for i := range db.nodes {
			c, err := db.nodes[i].pool.Get(ctx)
			if err != nil {
				return fmt.Errorf("schema agreement: %w", err)
			}
			err = c.query(ctx, "SELECT schema_version FROM system.local", cql.One)
			var v []byte
			if err == nil {
				v, err = firstValue(c)
			}
			db.nodes[i].pool.Put(c)
			if err != nil {
				return fmt.Errorf("schema agreement: node %s: %w", db.nodes[i].ep, err)
			}
			versions[i] = string(v)
		}
		same := true
		for _, v := range versions[1:] {
			same = same && v == versions[0]
		}
		if same {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("schema agreement: the nodes still disagree after %v: %w", agreeTimeout, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// firstValue returns the first column of the one row of the result in c.body (a view).
func firstValue(c *conn) ([]byte, error) {
	r := cql.Reader{B: c.body}
	if k := r.Int(); k != cql.ResultRows {
		return nil, fmt.Errorf("%w: result kind %d", cql.ErrProtocol, k)
	}
	cols, rows, err := cql.Rows(&r)
	if err == nil && (cols < 1 || rows != 1) {
		err = fmt.Errorf("%d rows of %d columns, want 1", rows, cols)
	}
	v := r.Bytes()
	if err == nil {
		err = r.Err
	}
	return v, err
}

// conn takes a connection to the node that owns key.
func (db *DB) conn(ctx context.Context, key string) (*conn, error) {
	c, err := db.nodes[db.ring.node(key)].pool.Get(ctx)
	if err != nil {
		return nil, db.wrap(ctx, err)
	}
	c.begin()
	return c, nil
}

// run executes q with c's bound values, returns c to its pool and the result's row count.
func (db *DB) run(ctx context.Context, c *conn, q string) (int, error) {
	n, err := c.execute(ctx, q, db.cl)
	db.nodes[c.node].pool.Put(c)
	if err != nil {
		return 0, db.wrap(ctx, err)
	}
	return n, nil
}

func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	st := db.st.Load()
	c, err := db.conn(ctx, key)
	if err != nil {
		return err
	}
	c.bindString(key)
	n, err := db.run(ctx, c, st.pick(fields, st.readAll, st.readOne, st.read))
	if err == nil && n == 0 {
		return driver.ErrNotFound
	}
	return err
}

// Scan reads count rows from key's token on, at the node that owns key.
func (db *DB) Scan(ctx context.Context, key string, count int, fields []string) error {
	st := db.st.Load()
	c, err := db.conn(ctx, key)
	if err != nil {
		return err
	}
	c.bindString(key)
	c.bindInt(int32(min(count, 1<<31-1)))
	n, err := db.run(ctx, c, st.pick(fields, st.scanAll, st.scanOne, st.scan))
	if err == nil && n == 0 {
		return driver.ErrNotFound
	}
	return err
}

func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	st := db.st.Load()
	c, err := db.conn(ctx, key)
	if err != nil {
		return err
	}
	for _, v := range values {
		c.bindBytes(v)
	}
	c.bindString(key)
	_, err = db.run(ctx, c, st.pick(fields, st.updateAll, st.updateOne, st.update))
	return err
}

func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	st := db.st.Load()
	c, err := db.conn(ctx, key)
	if err != nil {
		return err
	}
	c.bindString(key)
	for _, v := range values {
		c.bindBytes(v)
	}
	_, err = db.run(ctx, c, st.pick(fields, st.insertAll, nil, st.insert))
	return err
}

// Close closes every connection, idle or in use: an operation blocked on one (a stopped
// server) returns an error that is net.ErrClosed at once, and later operations fail.
// Idempotent.
func (db *DB) Close() error {
	db.once.Do(func() {
		for _, n := range db.nodes {
			if n.pool != nil { // nil when Open failed before it
				n.pool.Close()
			}
		}
		db.conns.CloseAll()
	})
	return nil
}

// errPoolClosed wraps net.ErrClosed so that the generator counts it as a connection error.
var errPoolClosed = fmt.Errorf("cassandra: pool closed: %w", net.ErrClosed)

// wrap names the driver in an error; the context's error when it ended. A server's error
// stays a *cql.Error underneath (errors.As), with its code: read and write timeouts count as
// timeouts (net.Error).
func (db *DB) wrap(ctx context.Context, err error) error {
	if err == nil || err == errPoolClosed {
		return err
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("cassandra: %w (%v)", cerr, err)
	}
	return fmt.Errorf("cassandra: %w", err)
}
