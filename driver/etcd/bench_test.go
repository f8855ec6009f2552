package etcd

import (
	"testing"

	"github.com/boxbench/boxbench/testkit/drivertest"
)

// BenchmarkOps times each operation on one connection, with allocations: the hot path must
// not allocate.
func BenchmarkOps(b *testing.B) { drivertest.BenchmarkOps(b, binding) }
