// Package etcd drives etcd through its official Go client (go.etcd.io/etcd/client/v3), in a data
// model of one key per field: record k of table t is the keys "t/k/FIELD0" … "t/k/FIELDn-1".
//
//   - read: a get of the field's key (one field), otherwise a range over the record's prefix
//     (etcd returns the whole record; YCSB's field selection is then the client's).
//   - update: a put of the field's key (one field), or a transaction of puts (several). etcd has
//     no partial update of a value, so a key per field is what lets a YCSB update of one field
//     write one field, as the other bindings do (go-ycsb's etcd binding stores a record as one
//     JSON value and overwrites it with only the updated fields).
//   - insert: a transaction of one put per field (one raft entry, one fsync). etcd's put is an
//     upsert: an insert of an existing record overwrites it and an update of a missing one
//     creates it, as Redis's HSET in YCSB's Redis binding.
//   - scan: a range from the start record's prefix to the end of the table, limited to
//     count × fields keys; keys are in byte order and "/" sorts before every letter and digit,
//     so records come in key order.
//
// Every request is linearizable (etcd's default): a read goes through the leader's read
// index, a write through raft and the WAL's fsync.
//
// The RPCs go through each client's own gRPC connection (its interceptors add the auth token
// and retry what is safe to retry), invoked with the KV service's messages (etcdserverpb)
// rather than through clientv3's KV wrapper, so that an operation's request and reply are
// reused messages of the worker's call. gRPC itself allocates on every call (a stream, its
// headers, the reply's key-values): the allocations per operation that BenchmarkOps reports
// are gRPC's, not zero (see docs/performance.md).
package etcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

const (
	methodRange       = "/etcdserverpb.KV/Range"
	methodPut         = "/etcdserverpb.KV/Put"
	methodTxn         = "/etcdserverpb.KV/Txn"
	methodDeleteRange = "/etcdserverpb.KV/DeleteRange"
	// maxTxnOps and maxTxnBytes bound the transactions the driver sends: boxbench's
	// configuration lets the server take 1024 operations (--max-txn-ops) and 1.5 MiB a request
	// (--max-request-bytes); a larger batch is split.
	maxTxnOps   = 1024
	maxTxnBytes = 1 << 20
)

// DB is a set of clients (each one HTTP/2 connection), used round robin. Safe for concurrent
// use.
type DB struct {
	clis   []*clientv3.Client
	conns  []*grpc.ClientConn
	next   atomic.Uint32
	tbl    atomic.Pointer[table]
	reqs   sync.Pool // *req
	closed atomic.Bool
	once   sync.Once
}

type table struct {
	prefix []byte // "usertable/"
	end    []byte // the end of the table's range: "usertable0" ("/" + 1)
	fields int
}

var _ driver.DB = (*DB)(nil)

// New opens poolSize clients (at least one) to ep, authenticating when cred has a password;
// ctx bounds the dial and a first request on each.
func New(ctx context.Context, ep driver.Endpoint, cred dbms.Credentials, poolSize int) (driver.DB, error) {
	db := &DB{}
	db.reqs.New = func() any { return new(req) }
	db.tbl.Store(newTable(driver.Table{Name: "usertable", FieldCount: 10}))
	for range max(1, poolSize) {
		cfg := dbms.EtcdConfig(ep, cred)
		cfg.Context = context.Background() // the clients outlive ctx
		cli, err := clientv3.New(cfg)
		if err == nil {
			_, err = cli.Get(ctx, "boxbench-ready") // checks the endpoint and the credentials
			if err != nil {
				cli.Close()
			}
		}
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("etcd %s: %w", ep, err)
		}
		db.clis = append(db.clis, cli)
		db.conns = append(db.conns, cli.ActiveConnection())
	}
	return db, nil
}

func newTable(t driver.Table) *table {
	p := []byte(t.Name + "/")
	end := append([]byte(nil), p...)
	end[len(end)-1]++
	return &table{prefix: p, end: end, fields: max(1, t.FieldCount)}
}

// req is one operation's reused messages and key buffers. Owned by one call at a time.
type req struct {
	key, end []byte
	rng      pb.RangeRequest
	rresp    pb.RangeResponse
	put      pb.PutRequest
	presp    pb.PutResponse
	txn      pb.TxnRequest
	tresp    pb.TxnResponse
	ops      []*pb.RequestOp
	opv      []pb.RequestOp
	wrap     []pb.RequestOp_RequestPut
	puts     []pb.PutRequest
	keys     []byte // the field keys of a transaction, back to back
}

func (db *DB) conn() *grpc.ClientConn {
	return db.conns[int(db.next.Add(1))%len(db.conns)]
}

func (db *DB) take() *req { return db.reqs.Get().(*req) }

// give returns r to the pool without what the server sent (not kept past the call) and
// without references to the caller's values.
func (db *DB) give(r *req) {
	r.rresp.Kvs = r.rresp.Kvs[:0]
	r.put.Value = nil
	for i := range r.puts {
		r.puts[i].Value = nil
	}
	db.reqs.Put(r)
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

// Setup deletes every key of the table.
func (db *DB) Setup(ctx context.Context, t driver.Table) error {
	tb := newTable(t)
	db.tbl.Store(tb)
	var resp pb.DeleteRangeResponse
	return db.wrap(ctx, db.conn().Invoke(ctx, methodDeleteRange,
		&pb.DeleteRangeRequest{Key: tb.prefix, RangeEnd: tb.end}, &resp))
}

// Read gets one named field by its key, or the record's range.
func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	t := db.tbl.Load()
	r := db.take()
	defer db.give(r)
	r.key = t.recordKey(r.key[:0], key)
	r.rng = pb.RangeRequest{Key: r.key}
	if len(fields) == 1 {
		r.key = append(r.key, fields[0]...)
		r.rng.Key = r.key
	} else {
		r.end = append(r.end[:0], r.key...)
		r.end[len(r.end)-1]++
		r.rng.RangeEnd = r.end
	}
	return db.rangeCall(ctx, r)
}

// Scan ranges from key's record to the end of the table, count records' worth of keys.
func (db *DB) Scan(ctx context.Context, key string, count int, _ []string) error {
	t := db.tbl.Load()
	r := db.take()
	defer db.give(r)
	r.key = t.recordKey(r.key[:0], key)
	r.rng = pb.RangeRequest{Key: r.key, RangeEnd: t.end, Limit: int64(count * t.fields)}
	return db.rangeCall(ctx, r)
}

func (db *DB) rangeCall(ctx context.Context, r *req) error {
	r.rresp.Kvs = r.rresp.Kvs[:0]
	if err := db.conn().Invoke(ctx, methodRange, &r.rng, &r.rresp); err != nil {
		return db.wrap(ctx, err)
	}
	if len(r.rresp.Kvs) == 0 {
		return driver.ErrNotFound
	}
	return nil
}

// Update puts the given fields: one put, or one transaction of puts.
func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	t := db.tbl.Load()
	r := db.take()
	defer db.give(r)
	if len(fields) == 1 {
		r.key = append(t.recordKey(r.key[:0], key), fields[0]...)
		r.put = pb.PutRequest{Key: r.key, Value: values[0]}
		return db.wrap(ctx, db.conn().Invoke(ctx, methodPut, &r.put, &r.presp))
	}
	r.reset(len(fields))
	r.add(t, key, fields, values)
	return db.txnCall(ctx, r)
}

// Insert writes every field of the record in one transaction.
func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	return db.Update(ctx, key, fields, values)
}

// BatchInsert writes the records in transactions of up to maxTxnOps puts.
func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	t := db.tbl.Load()
	r := db.take()
	defer db.give(r)
	per := max(1, maxTxnOps/max(1, len(fields)))
	for len(keys) > 0 {
		n, size := 0, 0
		for n < min(per, len(keys)) {
			rec := len(t.prefix) + len(keys[n]) + 1
			for i, f := range fields {
				rec += len(f) + len(values[n][i])
			}
			if n > 0 && size+rec > maxTxnBytes {
				break
			}
			n, size = n+1, size+rec
		}
		r.reset(n * len(fields))
		for i := range n {
			r.add(t, keys[i], fields, values[i])
		}
		if err := db.txnCall(ctx, r); err != nil {
			return err
		}
		keys, values = keys[n:], values[n:]
	}
	return nil
}

// reset empties r's transaction and makes room for n puts without moving what add writes.
func (r *req) reset(n int) {
	if cap(r.opv) < n {
		r.opv = make([]pb.RequestOp, n)
		r.ops = make([]*pb.RequestOp, n)
		r.wrap = make([]pb.RequestOp_RequestPut, n)
		r.puts = make([]pb.PutRequest, n)
	}
	r.ops = r.ops[:0]
	r.keys = r.keys[:0]
}

// add appends one put per field of key to r's transaction. The keys are written into r.keys
// first and sliced once it is complete (txnCall), so that growing it moves nothing referenced.
func (r *req) add(t *table, key string, fields []string, values [][]byte) {
	for i, f := range fields {
		j := len(r.ops)
		start := len(r.keys)
		r.keys = append(t.recordKey(r.keys, key), f...)
		r.puts[j] = pb.PutRequest{Value: values[i]}
		r.puts[j].Key = r.keys[start:len(r.keys):len(r.keys)] // re-sliced in txnCall
		r.wrap[j].RequestPut = &r.puts[j]
		r.opv[j].Request = &r.wrap[j]
		r.ops = append(r.ops, &r.opv[j])
	}
}

func (db *DB) txnCall(ctx context.Context, r *req) error {
	// r.keys may have moved while it grew: point every put at its final place.
	off := 0
	for j := range r.ops {
		n := len(r.puts[j].Key)
		r.puts[j].Key = r.keys[off : off+n : off+n]
		off += n
	}
	r.txn = pb.TxnRequest{Success: r.ops}
	err := db.conn().Invoke(ctx, methodTxn, &r.txn, &r.tresp)
	r.tresp.Responses = r.tresp.Responses[:0]
	return db.wrap(ctx, err)
}

// Close closes every client; an operation in flight fails with an error that is
// net.ErrClosed. Idempotent.
func (db *DB) Close() error {
	db.once.Do(func() {
		db.closed.Store(true)
		for _, c := range db.clis {
			_ = c.Close()
		}
	})
	return nil
}

// wrap turns a gRPC error into the driver's: the context's own error when it ended,
// net.ErrClosed after Close.
func (db *DB) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if db.closed.Load() {
		return fmt.Errorf("etcd: %w: %v", net.ErrClosed, err)
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("etcd: %w", cerr)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("etcd: %w", err)
}
