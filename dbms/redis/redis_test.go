package redis

import (
	"testing"

	"github.com/boxbench/boxbench/dbms"
)

// TestNoBuiltFiles: Redis is Debian's packages only, with a password too.
func TestNoBuiltFiles(t *testing.T) {
	if got := dbms.BuiltFiles(dbms.WithPassword(Redis{}, "pw")); got != nil {
		t.Errorf("BuiltFiles(redis with a password) = %v", got)
	}
}
