package cassandra

import (
	"testing"

	"github.com/boxbench/boxbench/driver/drivertest"
)

// binding is what the shared driver tests (drivertest) need to know of this driver: CQL writes
// are upserts, and scans run in token order (YCSB's Cassandra binding).
var binding = drivertest.Binding{DBMS: "cassandra", Open: New, Upsert: true, HashOrder: true}

// TestOperations runs every operation of the driver contract against a real server.
func TestOperations(t *testing.T) { drivertest.Conformance(t, binding) }

// TestStoppedServer: against a stopped server, an operation whose context ends returns the
// context's error, and Close breaks an operation that has no deadline; after the server
// resumes, the pool replaces the broken connection.
func TestStoppedServer(t *testing.T) { drivertest.StoppedServer(t, binding) }
