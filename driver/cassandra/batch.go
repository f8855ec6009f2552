package cassandra

import (
	"context"
	"fmt"

	"github.com/boxbench/boxbench/driver/cassandra/cql"
)

// batchChunk bounds the inserts in flight on one connection: their requests go out in one
// write and their replies are read as they come, then the next chunk.
const batchChunk = 16

// BatchInsert pipelines the rows' prepared inserts on one connection to the node that owns
// the first key (it coordinates the others' writes, as a CQL BATCH's coordinator would),
// batchChunk at a time, one stream per row. Every row is attempted; the first error is
// returned. Why not a CQL BATCH: an unlogged batch over many partitions is a single
// coordinator's work too, Cassandra warns about one over 10 partitions or 5 KiB and refuses one
// over 50 KiB (a YCSB batch of 100 rows of 1 KiB); BenchmarkBatchInsert measures both.
func (db *DB) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("cassandra batch insert: %d keys, %d value rows", len(keys), len(values))
	}
	if len(keys) == 0 {
		return nil
	}
	st := db.st.Load()
	q := st.pick(fields, st.insertAll, nil, st.insert)
	c, err := db.conn(ctx, keys[0])
	if err != nil {
		return err
	}
	for i := 0; i < len(keys) && err == nil; i += batchChunk {
		j := min(i+batchChunk, len(keys))
		err = c.pipeline(ctx, q, db.cl, keys[i:j], values[i:j])
	}
	db.nodes[c.node].pool.Put(c)
	return db.wrap(ctx, err)
}

// pipeline sends the inserts of keys on streams 0..n-1 and reads their n replies; a statement
// the server has forgotten is prepared again and the rows sent once more (inserts are
// upserts).
func (c *conn) pipeline(ctx context.Context, q string, cl cql.Consistency, keys []string, values [][][]byte) error {
	for attempt := 0; ; attempt++ {
		id, err := c.prepared(ctx, q)
		if err != nil {
			return err
		}
		for i, k := range keys {
			c.begin()
			c.bindString(k)
			for _, v := range values[i] {
				c.bindBytes(v)
			}
			c.wbuf = cql.AppendExecute(c.wbuf, int16(i), id, cl, c.nvals, c.vals)
		}
		err = c.roundTrip(ctx, len(keys))
		if cql.IsUnprepared(err) && attempt == 0 {
			delete(c.prep, q)
			continue
		}
		return err
	}
}

// batch sends the inserts of keys as one unlogged CQL BATCH (for BenchmarkBatchInsert).
func (c *conn) batch(ctx context.Context, q string, cl cql.Consistency, keys []string, values [][][]byte) error {
	for attempt := 0; ; attempt++ {
		id, err := c.prepared(ctx, q)
		if err != nil {
			return err
		}
		var s int
		c.wbuf, s = cql.BeginBatch(c.wbuf, 0, cql.BatchUnlogged, len(keys))
		for i, k := range keys {
			c.begin()
			c.bindString(k)
			for _, v := range values[i] {
				c.bindBytes(v)
			}
			c.wbuf = cql.AppendBatchExecute(c.wbuf, id, c.nvals, c.vals)
		}
		c.wbuf = cql.EndBatch(c.wbuf, s, cl)
		err = c.roundTrip(ctx, 1)
		if cql.IsUnprepared(err) && attempt == 0 {
			delete(c.prep, q)
			continue
		}
		if err == nil {
			err = c.expect(cql.OpResult, "BATCH")
		}
		return err
	}
}
