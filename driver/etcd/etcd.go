// Package etcd drives etcd's KV service over gRPC with a client of boxbench's own (conn.go:
// HTTP/2 over cleartext TCP or etcd's unix socket, protobuf by hand in proto.go), in a data
// model of one key per field: record k of table t is the keys "t/k/FIELD0" … "t/k/FIELDn-1".
//
//   - read: a Range of the field's key (one field), otherwise a Range over the record's
//     prefix (etcd returns the whole record; YCSB's field selection is then the client's).
//   - update: a Put of the field's key (one field), or a Txn of puts (several). etcd has no
//     partial update of a value, so a key per field is what lets a YCSB update of one field
//     write one field, as the other bindings do (go-ycsb's etcd binding stores a record as one
//     JSON value and overwrites it with only the updated fields).
//   - insert: a Txn of one put per field (one raft entry, one fsync). etcd's put is an upsert:
//     an insert of an existing record overwrites it and an update of a missing one creates it,
//     as Redis's HSET in YCSB's Redis binding.
//   - scan: a Range from the start record's prefix to the end of the table, limited to
//     count × fields keys; keys are in byte order and "/" sorts before every letter and digit,
//     so records come in key order.
//
// Every request is linearizable (etcd's default): a read goes through the leader's read
// index, a write through raft and the WAL's fsync.
//
// Why a client of its own: the official client (go.etcd.io/etcd/client/v3 over grpc-go) cost
// about 180 µs of client CPU and 100–160 allocations per operation, most of it in gRPC's writer
// goroutine, the wake-ups between its goroutines and allocation (docs/performance.md). Here a
// worker owns its connection (driver/internal/pool, one per worker, as the Redis and
// PostgreSQL drivers): an operation encodes its request into the connection's buffers, and
// netconn sends it with one write and reads the reply, parsed in place; nothing is allocated
// and no other goroutine is involved. The wire traffic is what grpc-go sends: one HTTP/2
// stream per call, HEADERS and DATA frames.
//
// Authentication as clientv3 does it: with a password, each connection calls
// Auth.Authenticate once and sends the token as the "token" metadata of every call; a call
// refused for an invalid token (or an old auth revision) re-authenticates and is retried once.
//
// A cluster (driver.Endpoint.Members): the connections are spread over the members round
// robin in the order they are dialled (connection i to member i mod n, the next member when
// one does not answer), so a pool of n×k connections has k on each member. clientv3 balanced
// each client's calls over every member round robin; here a worker's calls stay on one member,
// the way a process that holds a connection to its nearest member does.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/internal/netconn"
	"github.com/boxbench/boxbench/driver/internal/pool"
)

const (
	// maxTxnOps and maxTxnBytes bound the transactions the driver sends: boxbench's
	// configuration lets the server take 1024 operations (--max-txn-ops) and 1.5 MiB a request
	// (--max-request-bytes); a larger batch is split.
	maxTxnOps   = 1024
	maxTxnBytes = 1 << 20
)

// DB is a pool of connections to one server or the members of a cluster. Safe for concurrent
// use.
type DB struct {
	ep      driver.Endpoint
	cred    driver.Credentials
	targets []target
	dials   atomic.Uint32
	conns   netconn.Conns
	pool    *pool.Pool[client]
	tbl     atomic.Pointer[table]
	closed  atomic.Bool
	once    sync.Once
}

type target struct{ network, addr, authority string }

type table struct {
	prefix []byte // "usertable/"
	end    []byte // the end of the table's range: "usertable0" ("/" + 1)
	fields int
}

// client is one connection and the buffers of the operation it carries.
type client struct {
	*conn
	db   *DB
	key  []byte // a record's key prefix or a field's key
	end  []byte
	user string
}

var _ driver.DB = (*DB)(nil)

// New connects to ep (every member of a cluster: see the package comment) with up to poolSize
// connections (at least one), authenticating when cred has a password, and checks the server
// answers a linearizable read. The context bounds the check; the pool dials the other
// connections on first use.
func New(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int) (driver.DB, error) {
	db := &DB{ep: ep, cred: cred}
	db.tbl.Store(newTable(driver.Table{Name: "usertable", FieldCount: 10}))
	switch {
	case len(ep.Members) > 0:
		for _, m := range ep.Members {
			db.targets = append(db.targets, tcpTarget(m))
		}
	case ep.Unix != "":
		db.targets = []target{{network: "unix", addr: ep.Unix, authority: "localhost"}}
	default:
		db.targets = []target{tcpTarget(ep)}
	}
	p, err := pool.Open(ctx, poolSize, db.dial, nil, func(c *client) bool { return c.broken },
		func(c *client) { c.close() }, errPoolClosed)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("etcd %s: %w", ep, err)
	}
	db.pool = p
	return db, nil
}

func tcpTarget(e driver.Endpoint) target {
	a := net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
	return target{network: "tcp", addr: a, authority: a}
}

// dial opens a connection to the next member, or the ones after it if it does not answer,
// authenticates it and checks it with a read.
func (db *DB) dial(ctx context.Context) (*client, error) {
	first := int(db.dials.Add(1)-1) % len(db.targets)
	var errs []error
	for i := range db.targets {
		t := db.targets[(first+i)%len(db.targets)]
		c, err := db.dialTarget(ctx, t)
		if err == nil {
			return c, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", t.addr, err))
		if ctx.Err() != nil || db.closed.Load() || isAuthFailure(err) {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func (db *DB) dialTarget(ctx context.Context, t target) (*client, error) {
	nc, err := db.conns.Dial(ctx, t.network, t.addr)
	if err != nil {
		return nil, err
	}
	hc, err := newConn(nc, t.authority)
	if err != nil {
		nc.Close()
		return nil, err
	}
	c := &client{conn: hc, db: db}
	if db.cred.Password != "" {
		c.user = db.cred.User
		if err := db.authenticate(ctx, c); err != nil {
			c.close()
			return nil, err
		}
	}
	c.key = append(c.key[:0], "boxbench-ready"...)
	if err := db.do(ctx, c, mRange, appendRange(c.request(), c.key, nil, 1)); err != nil {
		c.close()
		return nil, err
	}
	if _, err := countField(c.msg, fRangeRespKvs); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// authenticate gets a token for c's connection and puts it in its header blocks.
func (db *DB) authenticate(ctx context.Context, c *client) error {
	if err := db.roundTrip(ctx, c, mAuthenticate, appendAuthenticate(c.request(), c.user, db.cred.Password)); err != nil {
		return fmt.Errorf("authenticate as %s: %w", c.user, err)
	}
	tok, err := bytesField(c.msg, fAuthRespToken)
	if err != nil {
		return err
	}
	if len(tok) == 0 {
		return fmt.Errorf("authenticate as %s: the server returned no token (is auth enabled?)", c.user)
	}
	c.setToken(tok)
	return nil
}

// isAuthFailure: wrong user or password, the same on every member.
func isAuthFailure(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == codeInvalidArgument
}

// do is roundTrip, re-authenticating and retrying once when the token is refused. msg is
// kept (the retry sends it again).
func (db *DB) do(ctx context.Context, c *client, m method, msg []byte) error {
	err := db.roundTrip(ctx, c, m, msg)
	if err == nil || !needsAuth(err) || db.cred.Password == "" {
		return err
	}
	saved := append([]byte(nil), msg...) // rare: authenticate reuses the request buffer
	if aerr := db.authenticate(ctx, c); aerr != nil {
		return fmt.Errorf("%w (re-authenticating: %v)", err, aerr)
	}
	return db.roundTrip(ctx, c, m, append(c.request()[:0], saved...))
}

// roundTrip makes one call on c. A context that can be cancelled costs a watcher per call
// (context.AfterFunc) that closes the connection when it ends, which is what stops a call
// blocked in the kernel; the generator's workers use a context that cannot be cancelled and
// stop stuck calls by closing the pool (Close) instead.
func (db *DB) roundTrip(ctx context.Context, c *client, m method, msg []byte) error {
	var stop func() bool
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		stop = context.AfterFunc(ctx, func() { c.nc.Conn.Close() })
	}
	err := c.call(m, msg)
	if stop != nil && !stop() { // the context ended: its watcher closed the connection
		c.broken = true
		if err != nil {
			err = ctx.Err()
		}
	}
	return err
}
