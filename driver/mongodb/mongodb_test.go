package mongodb

import (
	"testing"

	"github.com/boxbench/boxbench/dbms/ferretdb"
	"github.com/boxbench/boxbench/testkit/drivertest"
)

// binding is what the shared driver tests (drivertest) need to know of this driver: FerretDB,
// the MongoDB wire-protocol server boxbench runs.
var binding = drivertest.Binding{DBMS: ferretdb.FerretDB{}, Open: New, FreshInserts: true}

// TestOperations runs every operation of the driver contract against a real server.
func TestOperations(t *testing.T) { drivertest.Conformance(t, binding) }

// TestStoppedServer: against a stopped server, an operation whose context ends returns the
// context's error, and Close breaks an operation that has no deadline (the generator's way of
// ending a run); after the server resumes, the pool replaces the broken connection.
func TestStoppedServer(t *testing.T) { drivertest.StoppedServer(t, binding) }
