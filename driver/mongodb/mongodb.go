// Package mongodb drives a MongoDB wire-protocol server (FerretDB, `dbms: ferretdb`) through the
// official MongoDB Go driver (go.mongodb.org/mongo-driver/v2), in the data model of YCSB's
// MongoDB binding: one collection named after the table, one document per record whose _id is
// the key and whose other fields are FIELD0..n (binary values).
//
//   - read: findOne by _id, with a projection of the named fields.
//   - scan: find _id ≥ key, sorted by _id, limited to count, with the projection.
//   - update: updateOne by _id with $set of the fields; a missing record is ErrNotFound.
//   - insert: insertOne (a duplicate key fails, as with YCSB's default mongodb.upsert=false);
//     batch insert: one ordered insertMany.
//
// Writes use the driver's default write concern (acknowledged) and reads the default read
// preference (primary), as YCSB's binding does without settings. The driver keeps its own pool
// of connections (maxPoolSize = the generator's pool size) and allocates on every operation
// (its operation, its BSON documents, a cursor per find): BenchmarkOps reports how much, and
// docs/performance.md the client CPU it costs.
package mongodb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// DB is the driver's client (a pool of connections). Safe for concurrent use.
type DB struct {
	cli    *mongo.Client
	db     *mongo.Database
	coll   atomic.Pointer[mongo.Collection]
	closed atomic.Bool
	once   sync.Once
}

var _ driver.DB = (*DB)(nil)

// New connects to ep with up to poolSize connections and checks the server answers (a ping);
// ctx bounds the check.
func New(ctx context.Context, ep driver.Endpoint, cred dbms.Credentials, poolSize int) (driver.DB, error) {
	o := dbms.MongoOptions(ep, cred).SetMaxPoolSize(uint64(max(1, poolSize)))
	cli, err := mongo.Connect(o)
	if err != nil {
		return nil, fmt.Errorf("mongodb %s: %w", ep, err)
	}
	name := cred.Database
	if name == "" {
		name = "ycsb"
	}
	db := &DB{cli: cli, db: cli.Database(name)}
	db.coll.Store(db.db.Collection("usertable"))
	if err := db.db.RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
		db.Close()
		return nil, fmt.Errorf("mongodb %s: %w", ep, err)
	}
	return db, nil
}

// UseTable names the collection the following operations use; Setup does it too. The
// generator calls it before a run whose load ran elsewhere.
func (db *DB) UseTable(t driver.Table) { db.coll.Store(db.db.Collection(t.Name)) }

// Setup drops the collection; the first insert creates it again.
func (db *DB) Setup(ctx context.Context, t driver.Table) error {
	c := db.db.Collection(t.Name)
	db.coll.Store(c)
	return db.wrap(ctx, c.Drop(ctx))
}

// projection selects the named fields (all of them when fields is nil).
func projection(fields []string) bson.D {
	if fields == nil {
		return nil
	}
	p := make(bson.D, len(fields))
	for i, f := range fields {
		p[i] = bson.E{Key: f, Value: 1}
	}
	return p
}

func (db *DB) Read(ctx context.Context, key string, fields []string) error {
	o := options.FindOne()
	if fields != nil {
		o.SetProjection(projection(fields))
	}
	r := db.coll.Load().FindOne(ctx, bson.D{{Key: "_id", Value: key}}, o)
	if err := r.Err(); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return driver.ErrNotFound
		}
		return db.wrap(ctx, err)
	}
	return nil
}

func (db *DB) Scan(ctx context.Context, key string, count int, fields []string) error {
	o := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(count))
	if fields != nil {
		o.SetProjection(projection(fields))
	}
	cur, err := db.coll.Load().Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: key}}}}, o)
	if err != nil {
		return db.wrap(ctx, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	n := 0
	for cur.Next(ctx) {
		n++
	}
	if err := cur.Err(); err != nil {
		return db.wrap(ctx, err)
	}
	if n == 0 {
		return driver.ErrNotFound
	}
	return nil
}

// document is the record's fields (and _id when key is not "").
func document(key string, fields []string, values [][]byte) bson.D {
	d := make(bson.D, 0, len(fields)+1)
	if key != "" {
		d = append(d, bson.E{Key: "_id", Value: key})
	}
	for i, f := range fields {
		d = append(d, bson.E{Key: f, Value: bson.Binary{Data: values[i]}})
	}
	return d
}

func (db *DB) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	r, err := db.coll.Load().UpdateOne(ctx, bson.D{{Key: "_id", Value: key}},
		bson.D{{Key: "$set", Value: document("", fields, values)}})
	if err != nil {
		return db.wrap(ctx, err)
	}
	if r.MatchedCount == 0 {
		return driver.ErrNotFound
	}
	return nil
}

func (db *DB) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	_, err := db.coll.Load().InsertOne(ctx, document(key, fields, values))
	return db.wrap(ctx, err)
}

func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	docs := make([]any, len(keys))
	for i, k := range keys {
		docs[i] = document(k, fields, values[i])
	}
	_, err := db.coll.Load().InsertMany(ctx, docs)
	return db.wrap(ctx, err)
}

// Close disconnects; an operation in flight fails with an error that is net.ErrClosed.
// Idempotent.
func (db *DB) Close() error {
	db.once.Do(func() {
		db.closed.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		defer cancel()
		// An expired context: Disconnect closes the connections at once instead of waiting for
		// operations in flight (a stopped server would never end them).
		_ = db.cli.Disconnect(ctx)
	})
	return nil
}

// wrap turns a driver error into the contract's: the context's error when it ended,
// net.ErrClosed after Close.
func (db *DB) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if db.closed.Load() {
		return fmt.Errorf("mongodb: %w: %v", net.ErrClosed, err)
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("mongodb: %w (%v)", cerr, err)
	}
	return fmt.Errorf("mongodb: %w", err)
}
