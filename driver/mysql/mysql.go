// Package mysql drives MariaDB and MySQL in YCSB's JDBC data model (a usertable with YCSB_KEY
// and FIELD0..n) through go-sql-driver/mysql with server-side prepared statements (no client
// interpolation), as YCSB's JDBC binding does. Rows are counted, not scanned into values.
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/internal/netconn"
	"github.com/boxbench/boxbench/driver/internal/sqltable"
	"github.com/boxbench/boxbench/internal/liblog"
)

// DB is a database/sql pool. Safe for concurrent use.
type DB struct {
	db    *sql.DB
	conns *netconn.Conns
	st    atomic.Pointer[stmts]
	args  sync.Pool // *[]any
	once  sync.Once
}

var _ driver.DB = (*DB)(nil)

// New opens a pool of up to poolSize (at least one) connections to ep and checks one.
func New(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, poolSize int) (driver.DB, error) {
	if poolSize < 1 {
		poolSize = 1
	}
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = cred.User, cred.Password, cred.Database
	cfg.Net, cfg.Addr = "tcp", ep.String()
	if ep.Unix != "" {
		cfg.Net, cfg.Addr = "unix", ep.Unix
	}
	cfg.ClientFoundRows = true // an update that changes nothing still found its row
	// The driver prints what it sees go wrong on a connection ("packets.go:58 unexpected EOF"
	// when the server is torn down under the pool) to stderr by itself; the error it returns
	// says the same to the caller, so the line goes to boxbench's log at debug level.
	cfg.Logger = liblog.Printer("mysql")
	// Tracked so that Close can break the connections operations hold, but with plain writes
	// (DialPlain, not netconn's deferred ones): go-sql-driver closes a statement by writing a
	// packet and reading no reply, which a deferred write would hold back.
	cs := &netconn.Conns{}
	cfg.DialFunc = cs.DialPlain
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql config: %w", err)
	}
	db := &DB{db: sql.OpenDB(conn), conns: cs}
	db.db.SetMaxOpenConns(poolSize)
	db.db.SetMaxIdleConns(poolSize)
	db.st.Store(newStmts(sqltable.DefaultTable))
	db.args.New = func() any { s := make([]any, 0, 32); return &s }
	if err := db.db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("mysql %s: %w", ep, err)
	}
	return db, nil
}

// UseTable names the table the following operations use (Setup does it too). Call it before
// any operation, not concurrently with them.
func (db *DB) UseTable(t driver.Table) {
	if db.st.Load().Name() != t.Name {
		db.st.Store(newStmts(t.Name))
	}
}

// Setup drops and creates the table.
func (db *DB) Setup(ctx context.Context, t driver.Table) error {
	db.UseTable(t)
	for _, q := range []string{sqltable.DropTable(t), sqltable.CreateTable(t)} {
		if _, err := db.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mysql setup %s: %w", t.Name, err)
		}
	}
	return nil
}

func (db *DB) prepared(ctx context.Context, kind sqltable.Kind, fields []string, rows int) (*sql.Stmt, error) {
	st := db.st.Load().Get(kind, fields, rows)
	p := &st.Prep
	if ps := p.ps.Load(); ps != nil {
		return ps, nil
	}
	// A failure is not remembered: the next operation tries again.
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.ps.Load(); ps != nil {
		return ps, nil
	}
	ps, err := db.db.PrepareContext(ctx, st.SQL)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", st.SQL, err)
	}
	p.ps.Store(ps)
	return ps, nil
}

func (db *DB) query(ctx context.Context, kind sqltable.Kind, key string, fields []string, count int) error {
	ps, err := db.prepared(ctx, kind, fields, 1)
	if err != nil {
		return err
	}
	var rows *sql.Rows
	if kind == sqltable.Scan {
		rows, err = ps.QueryContext(ctx, key, count)
	} else {
		rows, err = ps.QueryContext(ctx, key)
	}
	if err != nil {
		return err
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return driver.ErrNotFound
	}
	return nil
}

// Read selects the record's fields (all columns when fields is nil).
func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	return db.query(ctx, sqltable.Read, key, fields, 0)
}

// Scan selects count records from key on, in key order.
func (db *DB) Scan(ctx context.Context, key string, count int, fields []string) error {
	return db.query(ctx, sqltable.Scan, key, fields, count)
}

func (db *DB) exec(ctx context.Context, kind sqltable.Kind, fields []string, rows int, fill func(a []any) []any) (int64, error) {
	ps, err := db.prepared(ctx, kind, fields, rows)
	if err != nil {
		return 0, err
	}
	ap := db.args.Get().(*[]any)
	*ap = fill((*ap)[:0])
	res, err := ps.ExecContext(ctx, *ap...)
	clear(*ap) // do not keep the caller's values
	db.args.Put(ap)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Update sets fields of the record.
func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	// Values first: the statement is "SET f = ? … WHERE YCSB_KEY = ?".
	n, err := db.exec(ctx, sqltable.Update, fields, 1, func(a []any) []any {
		for _, v := range values {
			a = append(a, v)
		}
		return append(a, key)
	})
	if err == nil && n == 0 {
		return driver.ErrNotFound
	}
	return err
}

// Insert adds one record.
func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	_, err := db.exec(ctx, sqltable.Insert, fields, 1, func(a []any) []any {
		a = append(a, key)
		for _, v := range values {
			a = append(a, v)
		}
		return a
	})
	return err
}

// BatchInsert adds the records with multi-row INSERTs, as many rows per statement as the
// placeholder limit allows.
func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("mysql batch insert: %d keys, %d value rows", len(keys), len(values))
	}
	per := sqltable.BatchRows(len(fields))
	for len(keys) > 0 {
		n := min(per, len(keys))
		ks, vs := keys[:n], values[:n]
		_, err := db.exec(ctx, sqltable.Batch, fields, n, func(a []any) []any {
			for i, k := range ks {
				a = append(a, k)
				for _, v := range vs[i] {
					a = append(a, v)
				}
			}
			return a
		})
		if err != nil {
			return err
		}
		keys, values = keys[n:], values[n:]
	}
	return nil
}

// Close closes the pool and breaks the connections operations still hold (an operation blocked
// on one returns an error). Idempotent.
func (db *DB) Close() error {
	var err error
	db.once.Do(func() {
		// Idle connections first, politely (COM_QUIT); then whatever an operation still
		// holds, by closing its socket.
		err = db.db.Close()
		if errors.Is(err, gomysql.ErrInvalidConn) {
			err = nil
		}
		db.conns.CloseAll()
	})
	return err
}
