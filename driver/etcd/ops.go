package etcd

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/boxbench/boxbench/driver"
)

func newTable(t driver.Table) *table {
	p := []byte(t.Name + "/")
	end := append([]byte(nil), p...)
	end[len(end)-1]++
	return &table{prefix: p, end: end, fields: max(1, t.FieldCount)}
}

// recordKey appends "<table>/<key>/" to b.
func (t *table) recordKey(b []byte, key string) []byte {
	b = append(b, t.prefix...)
	b = append(b, key...)
	return append(b, '/')
}

// UseTable names the table (and its field count, which sizes a scan) the following operations
// use; Setup does it too. The generator calls it before a run whose load ran elsewhere.
func (db *DB) UseTable(t driver.Table) { db.tbl.Store(newTable(t)) }

// get takes a worker's connection from the pool.
func (db *DB) get(ctx context.Context) (*client, error) { return db.pool.Get(ctx) }

// Setup deletes every key of the table.
func (db *DB) Setup(ctx context.Context, t driver.Table) error {
	tb := newTable(t)
	db.tbl.Store(tb)
	c, err := db.get(ctx)
	if err != nil {
		return db.wrap(ctx, err)
	}
	err = db.do(ctx, c, mDeleteRange, appendDeleteRange(c.request(), tb.prefix, tb.end))
	db.pool.Put(c)
	return db.wrap(ctx, err)
}

// Read gets one named field by its key, or the record's range.
func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	t := db.tbl.Load()
	c, err := db.get(ctx)
	if err != nil {
		return db.wrap(ctx, err)
	}
	c.key = t.recordKey(c.key[:0], key)
	var msg []byte
	if len(fields) == 1 {
		c.key = append(c.key, fields[0]...)
		msg = appendRange(c.request(), c.key, nil, 0)
	} else {
		c.end = append(c.end[:0], c.key...)
		c.end[len(c.end)-1]++
		msg = appendRange(c.request(), c.key, c.end, 0)
	}
	err = db.rangeCall(ctx, c, msg)
	db.pool.Put(c)
	return err
}

// Scan ranges from key's record to the end of the table, count records' worth of keys.
func (db *DB) Scan(ctx context.Context, key string, count int, _ []string) error {
	t := db.tbl.Load()
	c, err := db.get(ctx)
	if err != nil {
		return db.wrap(ctx, err)
	}
	c.key = t.recordKey(c.key[:0], key)
	err = db.rangeCall(ctx, c, appendRange(c.request(), c.key, t.end, int64(max(1, count)*t.fields)))
	db.pool.Put(c)
	return err
}

// rangeCall sends a RangeRequest; no key-value in the reply is ErrNotFound.
func (db *DB) rangeCall(ctx context.Context, c *client, msg []byte) error {
	if err := db.do(ctx, c, mRange, msg); err != nil {
		return db.wrap(ctx, err)
	}
	n, err := countField(c.msg, fRangeRespKvs)
	if err != nil {
		c.broken = true
		return err
	}
	if n == 0 {
		return driver.ErrNotFound
	}
	return nil
}

// Update puts the given fields: one Put, or one Txn of puts.
func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	if len(fields) != len(values) {
		return fmt.Errorf("etcd update: %d fields, %d values", len(fields), len(values))
	}
	t := db.tbl.Load()
	c, err := db.get(ctx)
	if err != nil {
		return db.wrap(ctx, err)
	}
	if len(fields) == 1 {
		c.key = append(t.recordKey(c.key[:0], key), fields[0]...)
		err = db.do(ctx, c, mPut, appendPut(c.request(), c.key, values[0]))
	} else {
		msg := c.request()
		c.key = t.recordKey(c.key[:0], key)
		for i, f := range fields {
			msg = appendTxnPut(msg, c.key, f, values[i])
		}
		err = db.do(ctx, c, mTxn, msg)
	}
	db.pool.Put(c)
	return db.wrap(ctx, err)
}

// Insert writes every field of the record in one transaction.
func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	return db.Update(ctx, key, fields, values)
}

// BatchInsert writes the records in transactions of up to maxTxnOps puts and maxTxnBytes.
func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("etcd batch insert: %d keys, %d value rows", len(keys), len(values))
	}
	t := db.tbl.Load()
	c, err := db.get(ctx)
	if err != nil {
		return db.wrap(ctx, err)
	}
	defer db.pool.Put(c)
	per := max(1, maxTxnOps/max(1, len(fields)))
	for len(keys) > 0 {
		msg := c.request()
		n := 0
		for n < min(per, len(keys)) {
			if len(values[n]) != len(fields) {
				return fmt.Errorf("etcd batch insert: record %q has %d values for %d fields", keys[n], len(values[n]), len(fields))
			}
			c.key = t.recordKey(c.key[:0], keys[n])
			size := 0
			for i, f := range fields {
				size += txnPutSize(len(c.key)+len(f), len(values[n][i]))
			}
			if n > 0 && len(msg)+size > maxTxnBytes {
				break
			}
			for i, f := range fields {
				msg = appendTxnPut(msg, c.key, f, values[n][i])
			}
			n++
		}
		keys, values = keys[n:], values[n:]
		if err := db.do(ctx, c, mTxn, msg); err != nil {
			return db.wrap(ctx, err)
		}
	}
	return nil
}

// Close closes every connection, idle or in use: an operation blocked on one (a stopped
// server) returns an error at once, and later operations fail. Idempotent.
func (db *DB) Close() error {
	db.once.Do(func() {
		db.closed.Store(true)
		if db.pool != nil { // nil when New failed before the pool existed
			db.pool.Close()
		}
		db.conns.CloseAll()
	})
	return nil
}

// errPoolClosed wraps net.ErrClosed so that the generator counts it as a connection error.
var errPoolClosed = fmt.Errorf("etcd: pool closed: %w", net.ErrClosed)

// wrap gives an error the driver's meaning: the context's own error when it ended,
// net.ErrClosed after Close.
func (db *DB) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if db.closed.Load() {
		return fmt.Errorf("etcd: %w: %v", net.ErrClosed, err)
	}
	if cerr := ctx.Err(); cerr != nil && err == cerr {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("etcd: %w", cerr)
	}
	if !strings.HasPrefix(err.Error(), "etcd") { // a network error: say whose (error path only)
		return fmt.Errorf("etcd: %w", err)
	}
	return err
}
