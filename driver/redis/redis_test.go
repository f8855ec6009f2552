package redis

import (
	"testing"

	redisdb "github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/testkit/drivertest"
)

// binding is what the shared driver tests (drivertest) need to know of this driver.
var binding = drivertest.Binding{
	DBMS: redisdb.Redis{},
	Open: New,
	// HSET creates a missing record and overwrites an existing one, as in YCSB's binding
	// (see Update).
	Upsert: true,
}

// TestOperations runs every operation of the driver contract against a real server.
func TestOperations(t *testing.T) { drivertest.Conformance(t, binding) }
