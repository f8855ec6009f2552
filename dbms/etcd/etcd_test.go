package etcd

import (
	"testing"

	"github.com/boxbench/boxbench/dbms"
)

// TestServerBinary: the start command is boxbench's script; the server binary is etcd's, with
// a password too (which runs the script's password step first).
func TestServerBinary(t *testing.T) {
	if got := dbms.ServerBinary(dbms.WithPassword(Etcd{}, "pw")); got != "/usr/bin/etcd" {
		t.Errorf("ServerBinary(etcd with a password) = %q", got)
	}
}
