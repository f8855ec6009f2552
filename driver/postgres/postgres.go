// Package postgres drives PostgreSQL in YCSB's JDBC data model (a usertable with YCSB_KEY and
// FIELD0..n) through pgx v5's connection layer (pgconn): every statement is prepared once per
// connection and executed with text parameters (Bind, Execute, Sync through pgconn's
// frontend, see exec), and rows are counted, not decoded, so the client spends its CPU on the
// protocol and nothing else. Connections are conn (netconn.go): a write and a read per round
// trip, no read that fails first.
package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/internal/netconn"
	"github.com/boxbench/boxbench/driver/internal/pool"
	"github.com/boxbench/boxbench/driver/internal/sqltable"
)

// DB is a pool of PostgreSQL connections. Safe for concurrent use.
type DB struct {
	cfg   *pgconn.Config
	conns *netconn.Conns
	pool  *pool.Pool[pconn]
	st    atomic.Pointer[stmts]
	seq   atomic.Int64
	once  sync.Once
}

// pconn is one connection and what was prepared on it. Owned by one operation at a time.
type pconn struct {
	pg       *pgconn.PgConn
	prepared map[*stmt]bool
	params   [][]byte
	num      []byte
	broken   bool // an error left the protocol in an unknown state: put closes it
	// The messages of an execution, reused (the frontend encodes them, keeps nothing).
	bind    pgproto3.Bind
	execute pgproto3.Execute
	sync    pgproto3.Sync
}

var _ driver.DB = (*DB)(nil)

// New dials one connection to ep to check it and keeps up to poolSize (at least one) open.
func New(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int) (driver.DB, error) {
	if poolSize < 1 {
		poolSize = 1
	}
	cfg, err := pgconn.ParseConfig("sslmode=disable") // benchmark servers on loopback or a box network
	if err != nil {
		return nil, fmt.Errorf("postgres config: %w", err)
	}
	cfg.Host, cfg.Port = ep.Host, uint16(ep.Port)
	if ep.Unix != "" {
		cfg.Host = ep.Unix // a socket directory, as libpq takes it
	}
	cfg.User, cfg.Password, cfg.Database = cred.User, cred.Password, cred.Database
	cs := &netconn.Conns{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := cs.Dial(ctx, network, addr)
		if err != nil {
			return nil, err // not a nil *Conn inside a non-nil net.Conn
		}
		return c, nil
	}
	db := &DB{cfg: cfg, conns: cs}
	db.st.Store(newStmts(sqltable.DefaultTable, &db.seq))
	c, err := db.dial(ctx)
	if err != nil {
		return nil, err
	}
	db.pool = pool.New(poolSize, c, db.dial,
		func(c *pconn) bool { return c.broken || c.pg.IsClosed() },
		func(c *pconn) {
			if !c.pg.IsClosed() {
				_ = c.pg.Close(context.Background()) // politely: Terminate
			}
		}, errPoolClosed)
	return db, nil
}

// dialAttempts bounds how often dial tries a connection the transport lost before the server
// answered (a reset, or EOF during authentication): CI saw a data load fail once on such an
// EOF on a loaded host while the server stayed up. An answer of the server's own (a wrong
// password, too many connections) is never retried.
const dialAttempts = 3

func (db *DB) dial(ctx context.Context) (*pconn, error) {
	var err error
	for attempt := 1; ; attempt++ {
		var pg *pgconn.PgConn
		if pg, err = pgconn.ConnectConfig(ctx, db.cfg); err == nil {
			return &pconn{pg: pg, prepared: map[*stmt]bool{}}, nil
		}
		var answer *pgconn.PgError
		if errors.As(err, &answer) || attempt == dialAttempts || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("postgres connect %s:%d: %w", db.cfg.Host, db.cfg.Port, err)
}

// UseTable names the table the following operations use (Setup does it too). Call it before
// any operation, not concurrently with them.
func (db *DB) UseTable(t driver.Table) {
	if db.st.Load().Name() != t.Name {
		db.st.Store(newStmts(t.Name, &db.seq))
	}
}

// Setup drops and creates the table, as YCSB's JDBC binding documents it.
func (db *DB) Setup(ctx context.Context, t driver.Table) error {
	db.UseTable(t)
	q := sqltable.DropTable(t) + "; " + sqltable.CreateTable(t)
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	defer db.pool.Put(c)
	if _, err := c.pg.Exec(ctx, q).ReadAll(); err != nil {
		return fmt.Errorf("postgres setup %s: %w", t.Name, err)
	}
	return nil
}

// exec runs st with the parameters in c.params and returns the rows it returned or affected.
//
// It speaks the extended query protocol through pgconn's frontend (Bind, Execute, Sync; then
// BindComplete, DataRow…, CommandComplete, ReadyForQuery) rather than through
// PgConn.ExecStatement: the messages are the same, but ExecStatement copies every command tag
// into a new string (an allocation per operation), arms and stops a timer around every write
// and builds a result reader the driver does not need. Rows are counted, not decoded.
func (db *DB) exec(ctx context.Context, c *pconn, st *stmt, rowsReturned bool) (int64, error) {
	if !c.prepared[st] {
		if _, err := c.pg.Prepare(ctx, st.Prep, st.SQL, nil); err != nil {
			return 0, fmt.Errorf("prepare %q: %w", st.SQL, err)
		}
		c.prepared[st] = true
	}
	if ctx.Done() == nil {
		// Cannot be cancelled and has no deadline: pgconn skips its context watcher (two
		// mutex round trips per message) only for Background itself.
		ctx = context.Background()
	}
	fe := c.pg.Frontend()
	c.bind.PreparedStatement, c.bind.Parameters = st.Prep, c.params
	fe.SendBind(&c.bind)
	fe.SendExecute(&c.execute)
	fe.SendSync(&c.sync)
	err := fe.Flush()
	c.bind.Parameters = nil
	if err != nil {
		c.broken = true
		return 0, err
	}
	var n int64
	var pgErr error
	for {
		msg, err := c.pg.ReceiveMessage(ctx)
		if err != nil {
			c.broken = true
			return 0, err
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			n++
		case *pgproto3.CommandComplete:
			if !rowsReturned {
				n = rowsAffected(m.CommandTag)
			}
		case *pgproto3.ErrorResponse:
			pgErr = pgconn.ErrorResponseToPgError(m)
		case *pgproto3.ReadyForQuery:
			return n, pgErr
		}
	}
}

// rowsAffected is the number that ends a command tag ("UPDATE 1", "INSERT 0 1"); 0 if none.
func rowsAffected(tag []byte) int64 {
	i := bytes.LastIndexByte(tag, ' ')
	var n int64
	for _, ch := range tag[i+1:] {
		if ch < '0' || ch > '9' {
			return 0
		}
		n = n*10 + int64(ch-'0')
	}
	return n
}

// bytesOf views s as bytes without copying; pgconn only copies parameters into its buffer.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func (db *DB) run(ctx context.Context, kind sqltable.Kind, key string, fields []string, values [][]byte, count int) (int64, error) {
	st := db.st.Load().Get(kind, fields, 1)
	c, err := db.pool.Get(ctx)
	if err != nil {
		return 0, err
	}
	c.params = append(c.params[:0], bytesOf(key))
	switch kind {
	case sqltable.Scan:
		c.num = strconv.AppendInt(c.num[:0], int64(count), 10)
		c.params = append(c.params, c.num)
	case sqltable.Update, sqltable.Insert:
		c.params = append(c.params, values...)
	}
	n, err := db.exec(ctx, c, st, kind == sqltable.Read || kind == sqltable.Scan)
	clear(c.params) // do not keep the caller's values
	db.pool.Put(c)
	return n, err
}

// Read selects the record's fields (all columns when fields is nil).
func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	return notFoundIfNone(db.run(ctx, sqltable.Read, key, fields, nil, 0))
}

// Scan selects count records from key on, in key order.
func (db *DB) Scan(ctx context.Context, key string, count int, fields []string) error {
	return notFoundIfNone(db.run(ctx, sqltable.Scan, key, fields, nil, count))
}

// Update sets fields of the record.
func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	return notFoundIfNone(db.run(ctx, sqltable.Update, key, fields, values, 0))
}

// Insert adds one record.
func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	_, err := db.run(ctx, sqltable.Insert, key, fields, values, 0)
	return err
}

// BatchInsert adds the records with multi-row INSERTs, as many rows per statement as the
// parameter limit allows.
func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("postgres batch insert: %d keys, %d value rows", len(keys), len(values))
	}
	per := sqltable.BatchRows(len(fields))
	for len(keys) > 0 {
		n := min(per, len(keys))
		if err := db.batch(ctx, keys[:n], fields, values[:n]); err != nil {
			return err
		}
		keys, values = keys[n:], values[n:]
	}
	return nil
}

func (db *DB) batch(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	st := db.st.Load().Get(sqltable.Batch, fields, len(keys))
	c, err := db.pool.Get(ctx)
	if err != nil {
		return err
	}
	c.params = c.params[:0]
	for i, k := range keys {
		c.params = append(c.params, bytesOf(k))
		c.params = append(c.params, values[i]...)
	}
	_, err = db.exec(ctx, c, st, false)
	clear(c.params)
	db.pool.Put(c)
	return err
}

// Close closes idle connections, breaks the ones operations still hold (an operation blocked on
// one returns an error) and refuses new operations. Idempotent.
func (db *DB) Close() error {
	db.once.Do(func() {
		db.pool.Close()     // idle connections first, politely (Terminate)
		db.conns.CloseAll() // then the ones operations still hold
	})
	return nil
}

func notFoundIfNone(n int64, err error) error {
	if err == nil && n == 0 {
		return driver.ErrNotFound
	}
	return err
}

// errPoolClosed wraps net.ErrClosed so that the generator counts it as a connection error.
var errPoolClosed = fmt.Errorf("postgres: pool closed: %w", net.ErrClosed)
