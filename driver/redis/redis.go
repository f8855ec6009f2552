// Package redis drives Redis in the data model of YCSB's Redis binding: one hash per record
// (field name → value), plus one sorted set that indexes every key so that scans work.
//
// The client is the package's own: a RESP2 encoder and reply parser for exactly the commands
// the binding sends (HGETALL, HMGET, HSET, ZADD, ZRANGE BYLEX, FLUSHDB, PING, AUTH), one
// connection per worker (conn, netconn.go: a write and a read per round trip, no read that
// fails first). It replaced go-redis. In a load generator the client's CPU per operation is
// the product — it is charged to the client instead of the box, and it limits the rate one
// machine can drive — and a general client sends and does more than the benchmark means to:
// pool health checks, hooks, retries, push-notification handling, a command object, an
// argument slice of interfaces and a map per HGETALL reply. Here an operation encodes into a
// reused buffer, parses the reply in place only as far as the binding needs (counts, nil, the
// scanned keys) and allocates nothing. The wire traffic is the same as go-redis's: one request
// and one reply per operation (an insert's HSET and ZADD travel together), no batching across
// operations, which is what the benchmark is about.
//
// Scan: YCSB's binding keeps a sorted set "_indices" scored by Java's String.hashCode of the
// key and scans by score, which returns keys in hash order. This binding keeps the same set
// with score 0 and scans it by lexicographic range (ZRANGE BYLEX), so a scan returns the
// records that follow the start key in key order, as the SQL bindings do and as the driver
// contract says. The index costs every insert one more command, pipelined in the same round
// trip (YCSB sends two).
package redis

import (
	"context"
	"fmt"
	"github.com/boxbench/boxbench/driver/internal/netconn"
	"github.com/boxbench/boxbench/driver/internal/pool"
	"net"
	"strconv"
	"sync"
	"unsafe"

	"github.com/boxbench/boxbench/driver"
)

// IndexKey is the sorted set that holds every record key (YCSB's name for it).
const IndexKey = "_indices"

// DB is a pool of connections to one server. Safe for concurrent use.
type DB struct {
	ep    driver.Endpoint
	cred  driver.Credentials
	conns netconn.Conns
	pool  *pool.Pool[client]
	once  sync.Once
}

var _ driver.DB = (*DB)(nil)

// New connects to ep with up to poolSize connections (at least one) and checks the server
// answers. The context bounds the check.
func New(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int) (driver.DB, error) {
	db := &DB{ep: ep, cred: cred}
	p, err := pool.Open(ctx, poolSize, db.dial, db.ping, func(c *client) bool { return c.broken },
		func(c *client) { c.nc.Close() }, errPoolClosed)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("redis %s: %w", ep, err)
	}
	db.pool = p
	return db, nil
}

// ping checks that the server answers on c.
func (db *DB) ping(ctx context.Context, c *client) error {
	c.begin(1)
	c.arg("PING")
	_, err := db.roundTrip(ctx, c, 1)
	return err
}

// dial opens one connection and authenticates it if there is a password.
func (db *DB) dial(ctx context.Context) (*client, error) {
	network, addr := db.ep.Address()
	nc, err := db.conns.Dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := newClient(nc)
	if db.cred.Password != "" {
		if db.cred.User != "" {
			c.begin(3)
			c.arg("AUTH")
			c.arg(db.cred.User)
		} else {
			c.begin(2)
			c.arg("AUTH")
		}
		c.arg(db.cred.Password)
		if _, err := db.roundTrip(ctx, c, 1); err != nil {
			c.nc.Close()
			return nil, fmt.Errorf("auth: %w", err)
		}
	}
	return c, nil
}

// roundTrip writes the commands encoded in c and reads n replies. It returns the first reply
// and the first error (an error reply is an *errServer and leaves the connection usable).
//
// A context that can be cancelled costs a watcher per call (context.AfterFunc) that closes
// the connection when it ends, which is what stops an operation blocked in the kernel; the
// generator's workers use a context that cannot be cancelled and stop stuck operations by
// closing the pool (Close) instead.
func (db *DB) roundTrip(ctx context.Context, c *client, n int) (reply, error) {
	var stop func() bool
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			c.wbuf = c.wbuf[:0]
			return reply{}, err
		}
		stop = context.AfterFunc(ctx, func() { c.nc.Conn.Close() })
	}
	first, err := c.exchange(n)
	if stop != nil && !stop() { // the context ended: its watcher closed the connection
		c.broken = true
		if err != nil {
			err = ctx.Err()
		}
	}
	return first, err
}

func (c *client) exchange(n int) (reply, error) {
	if err := c.send(); err != nil {
		return reply{}, err
	}
	var first reply
	var firstErr error
	for i := 0; i < n; i++ {
		rep, err := c.readReply(i == 0 && c.collect)
		if err != nil {
			if !isServerError(err) {
				return first, err
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		if i == 0 {
			first = rep
		}
	}
	return first, firstErr
}

// Setup empties the database: Redis has no tables, and the benchmark owns the server.
func (db *DB) Setup(ctx context.Context, _ driver.Table) error {
	c, err := db.pool.Get(ctx)
	if err != nil {
		return fmt.Errorf("redis setup: %w", err)
	}
	c.begin(1)
	c.arg("FLUSHDB")
	_, err = db.roundTrip(ctx, c, 1)
	db.pool.Put(c)
	if err != nil {
		return fmt.Errorf("redis setup: flushdb: %w", err)
	}
	return nil
}

// Read fetches the hash (HGETALL) or the named fields (HMGET).
func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	c.read(key, fields)
	rep, err := db.roundTrip(ctx, c, 1)
	db.pool.Put(c)
	if err != nil {
		return err
	}
	if rep.kind != '*' {
		return fmt.Errorf("%w: %q reply to a read", errProtocol, rep.kind)
	}
	if rep.n <= 0 || rep.firstNil {
		return driver.ErrNotFound
	}
	return nil
}

// read encodes the HGETALL or HMGET of one record.
func (c *client) read(key string, fields []string) {
	if fields == nil {
		c.begin(2)
		c.arg("HGETALL")
		c.arg(key)
		return
	}
	c.begin(2 + len(fields))
	c.arg("HMGET")
	c.arg(key)
	for _, f := range fields {
		c.arg(f)
	}
}

// Scan reads count keys from the index starting at key (one round trip), then their hashes
// (a second one, all the reads pipelined), as YCSB's binding does.
func (db *DB) Scan(ctx context.Context, key string, count int, fields []string) error {
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	defer db.pool.Put(c)
	c.begin(8)
	c.arg("ZRANGE")
	c.arg(IndexKey)
	c.argPrefixed('[', key)
	c.arg("+")
	c.arg("BYLEX")
	c.arg("LIMIT")
	c.arg("0")
	c.argInt(int64(count))
	c.keys, c.keyEnds = c.keys[:0], c.keyEnds[:0]
	c.collect = true
	rep, err := db.roundTrip(ctx, c, 1)
	c.collect = false
	if err != nil {
		return err
	}
	if rep.kind != '*' {
		return fmt.Errorf("%w: %q reply to ZRANGE", errProtocol, rep.kind)
	}
	if len(c.keyEnds) == 0 {
		return driver.ErrNotFound
	}
	start := 0
	for _, end := range c.keyEnds {
		c.read(bytesString(c.keys[start:end]), fields)
		start = end
	}
	_, err = db.roundTrip(ctx, c, len(c.keyEnds))
	return err
}

// Update sets fields with HSET. Like YCSB's binding it does not check that the record exists
// (HSET creates it), so Redis never reports ErrNotFound for an update.
func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	c.hset(key, fields, values)
	_, err = db.roundTrip(ctx, c, 1)
	db.pool.Put(c)
	return err
}

// Insert writes the hash and indexes the key, in one round trip.
func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	c.hset(key, fields, values)
	c.zadd(key)
	_, err = db.roundTrip(ctx, c, 2)
	db.pool.Put(c)
	return err
}

// BatchInsert pipelines the inserts of all keys in one round trip.
func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("redis batch insert: %d keys, %d value rows", len(keys), len(values))
	}
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	for i, k := range keys {
		c.hset(k, fields, values[i])
	}
	c.begin(2 + 2*len(keys))
	c.arg("ZADD")
	c.arg(IndexKey)
	for _, k := range keys {
		c.arg("0")
		c.arg(k)
	}
	_, err = db.roundTrip(ctx, c, len(keys)+1)
	db.pool.Put(c)
	return err
}

func (c *client) hset(key string, fields []string, values [][]byte) {
	c.begin(2 + 2*len(fields))
	c.arg("HSET")
	c.arg(key)
	for i, f := range fields {
		c.arg(f)
		c.argBytes(values[i])
	}
}

func (c *client) zadd(key string) {
	c.begin(4)
	c.arg("ZADD")
	c.arg(IndexKey)
	c.arg("0")
	c.arg(key)
}

func (c *client) argPrefixed(p byte, s string) {
	c.wbuf = append(c.wbuf, '$')
	c.wbuf = strconv.AppendInt(c.wbuf, int64(len(s)+1), 10)
	c.wbuf = append(c.wbuf, '\r', '\n', p)
	c.wbuf = append(c.wbuf, s...)
	c.wbuf = append(c.wbuf, '\r', '\n')
}

// Close closes every connection, idle or in use: an operation blocked on one (a stopped
// server) returns an error at once, and later operations fail. Idempotent.
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
var errPoolClosed = fmt.Errorf("redis: pool closed: %w", net.ErrClosed)

// bytesString views b as a string without copying; the caller keeps b unchanged meanwhile.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
