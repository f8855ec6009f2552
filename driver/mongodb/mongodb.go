// Package mongodb drives a MongoDB wire-protocol server (FerretDB, `dbms: ferretdb`) in the
// data model of YCSB's MongoDB binding: one collection named after the table, one document per
// record whose _id is the key and whose other fields are FIELD0..n (binary values).
//
//   - read: find {_id: key} with a projection of the named fields, limit 1, batchSize 1,
//     singleBatch; no document is ErrNotFound.
//   - scan: find {_id: {$gte: key}} sorted by _id, limit and batchSize count, singleBatch, with
//     the projection; no document is ErrNotFound.
//   - update: one update statement {q: {_id: key}, u: {$set: fields}}; none matched is
//     ErrNotFound.
//   - insert: one insert (a duplicate key is a *WriteError with code 11000, as with YCSB's
//     default mongodb.upsert=false); batch insert: one ordered insert of all the documents
//     (split only where the server's maxWriteBatchSize or maxMessageSizeBytes says so).
//
// Writes use the server's default write concern (acknowledged) and reads its default read
// preference, as YCSB's binding does without settings; the connection is direct.
//
// The client is the package's own (wire.go: OP_MSG; command.go: the commands; reply.go: the
// replies), one connection per worker (driver/internal/pool, netconn: one write and one read
// per round trip). It replaced the official Go driver (go.mongodb.org/mongo-driver/v2), which
// allocated 73–94 objects per operation (its operation, BSON documents through reflection, a
// cursor and a session per find) and kept background goroutines (server monitoring, pool
// maintenance) whose CPU the generator's client was charged with. BSON is still the official
// driver's: commands are built with bsoncore's Append* functions into a reused buffer and
// replies are read in place with bsoncore (no decoding into Go values), so an operation
// allocates nothing. Only the message framing and the handshake are written here.
//
// Handshake: hello (client metadata), then, with a password, SASL PLAIN on $external: the
// mechanism FerretDB 1.x offers without its experimental authentication, which hands the
// credentials to PostgreSQL (dbms/ferretdb). The official driver stays in the database's own
// readiness probe (dbms/ferretdb's Ready: not a hot path).
package mongodb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/internal/netconn"
	"github.com/boxbench/boxbench/driver/internal/pool"
)

// DB is a pool of connections to one server. Safe for concurrent use.
type DB struct {
	ep    driver.Endpoint
	cred  driver.Credentials
	db    string                 // the database ($db) of every command
	coll  atomic.Pointer[string] // the collection the operations use
	conns netconn.Conns
	pool  *pool.Pool[conn]
	once  sync.Once
}

var _ driver.DB = (*DB)(nil)

// New connects to ep with up to poolSize connections (at least one), authenticates, and checks
// that the server answers a ping (which, on FerretDB, reaches PostgreSQL with the credentials:
// a wrong password fails here). The context bounds it all.
func New(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int) (driver.DB, error) {
	db := &DB{ep: ep, cred: cred, db: cred.Database}
	if db.db == "" {
		db.db = "ycsb"
	}
	coll := "usertable"
	db.coll.Store(&coll)
	p, err := pool.Open(ctx, poolSize, db.dial, db.ping, func(c *conn) bool { return c.broken },
		func(c *conn) { c.nc.Close() }, errPoolClosed)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("mongodb %s: %w", ep, err)
	}
	db.pool = p
	return db, nil
}

// ping checks that the server answers on c (on FerretDB, with PostgreSQL behind it).
func (db *DB) ping(ctx context.Context, c *conn) error {
	c.simple("ping", "", db.db)
	if _, err := db.roundTrip(ctx, c); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// dial opens one connection: hello, and SASL PLAIN when there is a password.
func (db *DB) dial(ctx context.Context) (*conn, error) {
	network, addr := db.ep.Address()
	nc, err := db.conns.Dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := newConn(nc)
	c.hello()
	r, err := db.roundTrip(ctx, c)
	if err != nil {
		c.nc.Close()
		return nil, fmt.Errorf("hello: %w", err)
	}
	if r.limits.maxMessage > minMessage {
		c.maxMessage = int(min(r.limits.maxMessage, 1<<30))
	}
	if r.limits.maxBatch > 0 {
		c.maxBatch = int(min(r.limits.maxBatch, 1<<30))
	}
	if db.cred.Password != "" {
		c.saslStartPlain(db.cred.User, db.cred.Password)
		r, err = db.roundTrip(ctx, c)
		if err == nil && !r.done {
			err = errors.New("the server wants more than one PLAIN step")
		}
		if err != nil {
			c.nc.Close()
			return nil, fmt.Errorf("authenticate %s with PLAIN: %w", db.cred.User, err)
		}
	}
	return c, nil
}

// roundTrip sends the message built in c and decodes the reply (see decode for its errors).
//
// A context that can be cancelled costs a watcher per call (context.AfterFunc) that closes
// the connection when it ends, which is what stops an operation blocked in the kernel; the
// generator's workers use a context that cannot be cancelled and stop stuck operations by
// closing the pool (Close) instead.
func (db *DB) roundTrip(ctx context.Context, c *conn) (result, error) {
	var stop func() bool
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			return result{}, err
		}
		stop = context.AfterFunc(ctx, func() { c.nc.Conn.Close() })
	}
	body, err := c.exchange()
	if stop != nil && !stop() { // the context ended: its watcher closed the connection
		c.broken = true
		if err != nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		return result{}, err
	}
	r, err := decode(body)
	if errors.Is(err, errProtocol) {
		c.broken = true
	}
	return r, err
}

// UseTable names the collection the following operations use; Setup does it too. The
// generator calls it before a run whose load ran elsewhere.
func (db *DB) UseTable(t driver.Table) {
	name := t.Name
	db.coll.Store(&name)
}

// Setup drops the collection (a missing one is not an error); the first insert creates it
// again.
func (db *DB) Setup(ctx context.Context, t driver.Table) error {
	if t.Name == "" || strings.ContainsAny(t.Name, "\x00$") {
		return fmt.Errorf("mongodb setup: collection name %q: must be non-empty, without NUL or '$'", t.Name)
	}
	db.UseTable(t)
	c, err := db.pool.Get(ctx)
	if err != nil {
		return fmt.Errorf("mongodb setup: %w", err)
	}
	c.simple("drop", t.Name, db.db)
	_, err = db.roundTrip(ctx, c)
	db.pool.Put(c)
	var se *ServerError
	if errors.As(err, &se) && se.Code == codeNamespaceNotFound {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("mongodb setup: drop %s: %w", t.Name, err)
	}
	return nil
}

func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	return db.find(ctx, key, false, 1, fields)
}

func (db *DB) Scan(ctx context.Context, key string, count int, fields []string) error {
	if count < 1 || count > 1<<20 {
		return fmt.Errorf("mongodb scan: count %d: must be 1..%d", count, 1<<20)
	}
	return db.find(ctx, key, true, int32(count), fields)
}

// find runs a read (gte false) or a scan (gte true) and counts the documents it returns:
// none is ErrNotFound.
func (db *DB) find(ctx context.Context, key string, gte bool, limit int32, fields []string) error {
	if err := checkNames(fields); err != nil {
		return err
	}
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	c.find(*db.coll.Load(), db.db, key, gte, limit, fields)
	r, err := db.roundTrip(ctx, c)
	n := 0
	if err == nil {
		if n, err = documents(r.batch); err != nil {
			c.broken = true // a reply this client cannot read: do not trust the stream
		}
	}
	db.pool.Put(c)
	if err != nil {
		return err
	}
	if n == 0 {
		return driver.ErrNotFound
	}
	return nil
}

func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	if err := checkRow(fields, values); err != nil {
		return err
	}
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	c.update(*db.coll.Load(), db.db, key, fields, values)
	r, err := db.roundTrip(ctx, c)
	db.pool.Put(c)
	if err != nil {
		return err
	}
	if r.n == 0 {
		return driver.ErrNotFound
	}
	return nil
}

func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	if err := checkRow(fields, values); err != nil {
		return err
	}
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	c.insertStart(*db.coll.Load(), db.db)
	c.appendRecord(key, fields, values)
	c.finish()
	_, err = db.roundTrip(ctx, c)
	db.pool.Put(c)
	return err
}

// BatchInsert inserts all the records with one ordered insert command, or several in a row
// when they exceed the server's maxWriteBatchSize or maxMessageSizeBytes; it stops at the first
// write error, whose Index is the record's position in keys.
func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("mongodb batch insert: %d keys, %d value rows", len(keys), len(values))
	}
	for _, v := range values {
		if err := checkRow(fields, v); err != nil {
			return err
		}
	}
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	defer func() { db.pool.Put(c) }()
	coll := *db.coll.Load()
	for i := 0; i < len(keys); {
		first := i
		c.insertStart(coll, db.db)
		for i < len(keys) && i-first < c.maxBatch {
			mark := len(c.wbuf)
			c.appendRecord(keys[i], fields, values[i])
			if len(c.wbuf) > c.maxMessage && i > first { // the next message takes it
				c.wbuf = c.wbuf[:mark]
				break
			}
			i++
		}
		c.finish()
		if _, err := db.roundTrip(ctx, c); err != nil {
			var we *WriteError
			if errors.As(err, &we) && we.Index >= 0 {
				we.Index += first
			}
			return err
		}
	}
	return nil
}

// checkRow refuses a record the encoder cannot write: values of another length than fields,
// or a bad field name (checkNames).
func checkRow(fields []string, values [][]byte) error {
	if len(values) != len(fields) {
		return fmt.Errorf("mongodb: %d fields, %d values", len(fields), len(values))
	}
	return checkNames(fields)
}

// checkNames refuses a field name with a NUL byte: a BSON key is a C string (bsoncore would
// panic).
func checkNames(fields []string) error {
	for _, f := range fields {
		if strings.IndexByte(f, 0) >= 0 {
			return fmt.Errorf("mongodb: field name %q contains a NUL byte", f)
		}
	}
	return nil
}

// Close closes every connection, idle or in use: an operation blocked on one (a stopped
// server) returns an error that is net.ErrClosed at once, and later operations fail.
// Idempotent.
func (db *DB) Close() error {
	db.once.Do(func() {
		if db.pool != nil { // nil when New failed before the pool existed
			db.pool.Close()
		}
		db.conns.CloseAll()
	})
	return nil
}

// errPoolClosed wraps net.ErrClosed so that the generator counts it as a connection error.
var errPoolClosed = fmt.Errorf("mongodb: pool closed: %w", net.ErrClosed)
