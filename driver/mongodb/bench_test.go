package mongodb

import (
	"testing"

	"github.com/boxbench/boxbench/testkit/drivertest"
)

// BenchmarkOps times each operation on one connection, with allocations: the hot path must
// not allocate (insert: a new key per call, after the others).
func BenchmarkOps(b *testing.B) { drivertest.BenchmarkOps(b, binding) }
