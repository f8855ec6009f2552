package mongodb

import (
	"testing"

	"github.com/boxbench/boxbench/driver/drivertest"
)

// BenchmarkOps times each operation on one connection, with allocations (the MongoDB driver's:
// see the package comment).
func BenchmarkOps(b *testing.B) { drivertest.BenchmarkOps(b, binding) }
