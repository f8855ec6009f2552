package cassandra

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	cassandradb "github.com/boxbench/boxbench/dbms/cassandra"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/cassandra/cql"
	"github.com/boxbench/boxbench/testkit/drivertest"
	"github.com/boxbench/boxbench/testkit/testdb"
)

// BenchmarkOps times each operation on one connection, with allocations: the hot path must
// not allocate.
func BenchmarkOps(b *testing.B) { drivertest.BenchmarkOps(b, binding) }

// BenchmarkBatchInsert compares the two ways of inserting a batch of rows of 10 × 100 bytes:
// BatchInsert's pipelined per-row EXECUTEs and one unlogged CQL BATCH of the same prepared
// insert (which Cassandra refuses over 50 KiB), interleaved.
func BenchmarkBatchInsert(b *testing.B) {
	ctx := context.Background()
	box, d := testdb.Start(b, cassandradb.Cassandra{})
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
	c, err := cdb.nodes[0].pool.Get(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer cdb.nodes[0].pool.Put(c)
	modes := []func([]string, [][][]byte) error{
		func(k []string, v [][][]byte) error { return c.pipeline(ctx, st.insertAll, cql.One, k, v) },
		func(k []string, v [][][]byte) error { return c.batch(ctx, st.insertAll, cql.One, k, v) },
	}
	for _, n := range []int{10, 40} {
		keys := make([]string, n)
		vals := make([][][]byte, n)
		for i := range keys {
			keys[i], vals[i] = fmt.Sprintf("user%d", i*7919), row
		}
		// The two modes alternate, each timed on its own, so that a loaded host's drift
		// falls on both; a warm-up of each first (the server's JIT).
		b.Run(fmt.Sprintf("rows-%d", n), func(b *testing.B) {
			var spent [2]time.Duration
			for w := 0; w < 50; w++ {
				for _, m := range modes {
					if err := m(keys, vals); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				for i, m := range modes {
					start := time.Now()
					if err := m(keys, vals); err != nil {
						b.Fatal(err)
					}
					spent[i] += time.Since(start)
				}
			}
			b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N*n), "ns/row-pipelined")
			b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N*n), "ns/row-batch")
		})
	}
	keys, vals := make([]string, 64), make([][][]byte, 64)
	for i := range keys {
		keys[i], vals[i] = fmt.Sprintf("user%d", i*7919), row
	}
	b.Logf("a BATCH of 64 rows of 1 KiB: %v (a pipelined one: %v)", modes[1](keys, vals), modes[0](keys, vals))
}
