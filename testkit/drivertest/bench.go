package drivertest

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"unsafe"

	"github.com/boxbench/boxbench/driver"
)

// BenchmarkOps times one operation of each kind against a real server, one connection, with
// allocations: the driver's hot path must not allocate (an operation's round trip dominates
// ns/op; see bench/loadgen for the CPU it costs).
func BenchmarkOps(b *testing.B, bd Binding) {
	ctx := context.Background()
	_, _, db := open(ctx, b, bd, 1)
	defer db.Close()
	tbl := driver.Table{Name: "usertable", FieldCount: 10}
	fields := tbl.Fields()
	vals := make([][]byte, len(fields))
	for i := range vals {
		vals[i] = bytes.Repeat([]byte{'a' + byte(i)}, 100)
	}
	if err := db.Setup(ctx, tbl); err != nil {
		b.Fatal(err)
	}
	if err := db.Insert(ctx, "user1", fields, vals); err != nil {
		b.Fatal(err)
	}
	type op struct {
		name string
		op   func() error
	}
	ops := []op{
		{"read-all", func() error { return db.Read(ctx, "user1", nil) }},
		{"read-one", func() error { return db.Read(ctx, "user1", fields[3:4]) }},
		{"update-one", func() error { return db.Update(ctx, "user1", fields[3:4], vals[:1]) }},
	}
	// Without upserts insert is not timed here: a key can be inserted once (the generator's
	// inserts are in the side-by-side benchmark's workloads); update-one runs the same write
	// path.
	if bd.Upsert {
		ops = append(ops, op{"insert", func() error { return db.Insert(ctx, "user2", fields, vals) }})
	}
	ops = append(ops, op{"scan-10", func() error { return db.Scan(ctx, "user0", 10, nil) }})
	if bd.FreshInserts && !bd.Upsert {
		// The key is formatted into one buffer and viewed as a string, so that the benchmark
		// does not allocate a key per call (drivers do not keep the key after the call).
		var buf []byte
		n := 0
		ops = append(ops, op{"insert", func() error {
			n++
			buf = strconv.AppendInt(append(buf[:0], "new"...), int64(n), 10)
			return db.Insert(ctx, unsafe.String(unsafe.SliceData(buf), len(buf)), fields, vals)
		}})
	}
	for _, bc := range ops {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
