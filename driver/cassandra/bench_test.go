package cassandra

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/cassandra/cql"
	"github.com/boxbench/boxbench/driver/drivertest"
	"github.com/boxbench/boxbench/internal/testdb"
)

// BenchmarkOps times each operation on one connection, with allocations: the hot path must
// not allocate.
func BenchmarkOps(b *testing.B) { drivertest.BenchmarkOps(b, binding) }

// BenchmarkBatchInsert compares the two ways of inserting a batch of rows of 10 × 100 bytes:
// BatchInsert's pipelined per-row EXECUTEs and one unlogged CQL BATCH of the same prepared
// insert (which Cassandra refuses over 50 KiB: the 64-row case fails, and says so).
func BenchmarkBatchInsert(b *testing.B) {
	ctx := context.Background()
	box, d := testdb.Start(b, "cassandra")
	db, err := New(ctx, box.Endpoint(), d.Client(), 1)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	cdb := db.(*DB)
	tbl := driver.Table{Name: "usertable", FieldCount: 10}
	if err := db.Setup(ctx, tbl); err != nil {
		b.Fatal(err)
	}
	row := make([][]byte, tbl.FieldCount)
	for i := range row {
		row[i] = bytes.Repeat([]byte{'a' + byte(i)}, 100)
	}
	st := cdb.st.Load()
	for _, n := range []int{10, 40, 64} {
		keys := make([]string, n)
		vals := make([][][]byte, n)
		for i := range keys {
			keys[i], vals[i] = fmt.Sprintf("user%d", i*7919), row
		}
		for _, mode := range []string{"pipelined", "batch"} {
			b.Run(fmt.Sprintf("%s-%d", mode, n), func(b *testing.B) {
				b.ReportAllocs()
				c, err := cdb.nodes[0].pool.Get(ctx)
				if err != nil {
					b.Fatal(err)
				}
				defer cdb.nodes[0].pool.Put(c)
				for b.Loop() {
					if mode == "pipelined" {
						err = c.pipeline(ctx, st.insertAll, cql.One, keys, vals)
					} else {
						err = c.batch(ctx, st.insertAll, cql.One, keys, vals)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			})
		}
	}
}
