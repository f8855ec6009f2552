package cassandra

import (
	"testing"

	"github.com/boxbench/boxbench/driver/drivertest"
)

// BenchmarkOps times each operation on one connection, with allocations (gocql's: see the
// package comment).
func BenchmarkOps(b *testing.B) { drivertest.BenchmarkOps(b, binding) }
