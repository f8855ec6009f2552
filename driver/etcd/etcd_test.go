package etcd

import (
	"testing"

	"github.com/boxbench/boxbench/driver/drivertest"
)

// binding is what the shared driver tests (drivertest) need to know of this driver.
var binding = drivertest.Binding{
	DBMS: "etcd",
	Open: New,
	// A put creates a missing key and overwrites an existing one (see the package comment).
	Upsert: true,
}

// TestOperations runs every operation of the driver contract against a real server.
func TestOperations(t *testing.T) { drivertest.Conformance(t, binding) }

// TestStoppedServer: against a stopped server, an operation whose context ends returns the
// context's error, and Close breaks an operation that has no deadline (the generator's way of
// ending a run); after the server resumes, the client reconnects.
func TestStoppedServer(t *testing.T) { drivertest.StoppedServer(t, binding) }
