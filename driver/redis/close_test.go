package redis

import (
	"testing"

	"github.com/boxbench/boxbench/testkit/drivertest"
)

// TestStoppedServer: against a stopped server, an operation whose context ends returns the
// context's error, and Close breaks an operation that has no deadline (the generator's way of
// ending a run); after the server resumes, the pool replaces the broken connection.
func TestStoppedServer(t *testing.T) { drivertest.StoppedServer(t, binding) }
