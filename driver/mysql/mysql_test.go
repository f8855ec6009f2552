package mysql

import (
	"testing"

	"github.com/boxbench/boxbench/dbms/mariadb"
	"github.com/boxbench/boxbench/testkit/drivertest"
)

// binding is what the shared driver tests (drivertest) need to know of this driver.
var binding = drivertest.Binding{
	DBMS: mariadb.MariaDB{},
	Open: New,
}

// TestOperations runs every operation of the driver contract against a real server.
func TestOperations(t *testing.T) { drivertest.Conformance(t, binding) }
