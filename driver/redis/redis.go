// Package redis drives Redis with go-redis v9, in the data model of YCSB's Redis binding: one
// hash per record (field name → value), plus one sorted set that indexes every key so that
// scans work.
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
	"errors"
	"fmt"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// IndexKey is the sorted set that holds every record key (YCSB's name for it).
const IndexKey = "_indices"

// DB is a go-redis client. Safe for concurrent use.
type DB struct {
	c     *goredis.Client
	conns *conns
	args  sync.Pool // *[]any, reused argument vectors for HSET
}

var _ driver.DB = (*DB)(nil)

// New connects to ep with up to poolSize connections (at least one) and checks the server
// answers. The context bounds the check.
func New(ctx context.Context, ep driver.Endpoint, cred dbms.Credentials, poolSize int) (driver.DB, error) {
	if poolSize < 1 {
		poolSize = 1
	}
	cs := &conns{}
	o := &goredis.Options{
		Addr: ep.String(), Username: cred.User, Password: cred.Password,
		Dialer:   cs.dial,
		PoolSize: poolSize, MinIdleConns: 0,
		// No per-command deadlines: setting them costs a timer update per operation, and the
		// generator stops stuck operations by closing the connections (Close).
		ReadTimeout: -2, WriteTimeout: -2,
		// A failed operation is counted, not retried: a retry would hide the failure and
		// double its latency without saying so.
		MaxRetries: -1,
		// RESP2: flat replies, no push notifications to peek for; no CLIENT SETINFO round trip.
		Protocol: 2, DisableIdentity: true,
	}
	if ep.Unix != "" {
		o.Network, o.Addr = "unix", ep.Unix
	}
	db := &DB{c: goredis.NewClient(o), conns: cs}
	db.args.New = func() any { s := make([]any, 0, 32); return &s }
	if err := db.c.Ping(ctx).Err(); err != nil {
		db.Close()
		return nil, fmt.Errorf("redis %s: %w", ep, err)
	}
	return db, nil
}

// Setup empties the database: Redis has no tables, and the benchmark owns the server.
func (db *DB) Setup(ctx context.Context, _ driver.Table) error {
	if err := db.c.FlushDB(ctx).Err(); err != nil {
		return fmt.Errorf("redis setup: flushdb: %w", err)
	}
	return nil
}

// Read fetches the hash (HGETALL) or the named fields (HMGET).
func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	if fields == nil {
		m, err := db.c.HGetAll(ctx, key).Result()
		if err != nil {
			return err
		}
		if len(m) == 0 {
			return driver.ErrNotFound
		}
		return nil
	}
	v, err := db.c.HMGet(ctx, key, fields...).Result()
	if err != nil {
		return err
	}
	if len(v) == 0 || v[0] == nil {
		return driver.ErrNotFound
	}
	return nil
}

// Scan reads count keys from the index starting at key, then their hashes, in one pipeline.
func (db *DB) Scan(ctx context.Context, key string, count int, fields []string) error {
	keys, err := db.c.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: IndexKey, Start: "[" + key, Stop: "+",
		ByLex: true, Count: int64(count)}).Result()
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return driver.ErrNotFound
	}
	p := db.c.Pipeline()
	for _, k := range keys {
		if fields == nil {
			p.HGetAll(ctx, k)
		} else {
			p.HMGet(ctx, k, fields...)
		}
	}
	_, err = p.Exec(ctx)
	return err
}

// Update sets fields with HSET. Like YCSB's binding it does not check that the record exists
// (HSET creates it), so Redis never reports ErrNotFound for an update.
func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	ap := db.hsetArgs(fields, values)
	err := db.c.HSet(ctx, key, *ap...).Err()
	db.putArgs(ap)
	return err
}

// Insert writes the hash and indexes the key, in one round trip.
func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	ap := db.hsetArgs(fields, values)
	p := db.c.Pipeline()
	p.HSet(ctx, key, *ap...)
	p.ZAdd(ctx, IndexKey, goredis.Z{Member: key})
	_, err := p.Exec(ctx)
	db.putArgs(ap)
	return err
}

// BatchInsert pipelines the inserts of all keys in one round trip.
func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("redis batch insert: %d keys, %d value rows", len(keys), len(values))
	}
	p := db.c.Pipeline()
	members := make([]goredis.Z, len(keys))
	for i, k := range keys {
		args := make([]any, 0, 2*len(fields))
		for j, f := range fields {
			args = append(args, f, values[i][j])
		}
		p.HSet(ctx, k, args...)
		members[i] = goredis.Z{Member: k}
	}
	p.ZAdd(ctx, IndexKey, members...)
	_, err := p.Exec(ctx)
	return err
}

// Close closes the client, then breaks any connection an operation still holds (one blocked on
// a stopped server returns an error). Idempotent.
func (db *DB) Close() error {
	err := db.c.Close()
	db.conns.closeAll()
	if err != nil && !errors.Is(err, goredis.ErrClosed) {
		return err
	}
	return nil
}

func (db *DB) hsetArgs(fields []string, values [][]byte) *[]any {
	ap := db.args.Get().(*[]any)
	a := (*ap)[:0]
	for i, f := range fields {
		a = append(a, f, values[i])
	}
	*ap = a
	return ap
}

func (db *DB) putArgs(ap *[]any) {
	clear(*ap) // drop references to the caller's values
	db.args.Put(ap)
}
