package dbms

import (
	"os"
	"strings"
	"testing"
)

// TestWrappersKeepBuiltFiles: a database with a password or an idle box runs the same image,
// so its built files (part of the image's recipe) are the database's.
func TestWrappersKeepBuiltFiles(t *testing.T) {
	for _, d := range []DBMS{WithPassword(FerretDB{}, "pw"), Idle(FerretDB{}), Idle(WithPassword(FerretDB{}, "pw"))} {
		if got := BuiltFiles(d); len(got) != 1 || got[0] != FerretDBBinary {
			t.Errorf("BuiltFiles(%T) = %v, want [%s]", d, got, FerretDBBinary)
		}
	}
	if got := BuiltFiles(WithPassword(Redis{}, "pw")); got != nil {
		t.Errorf("BuiltFiles(redis with a password) = %v", got)
	}
	if got := ServerBinary(WithPassword(Etcd{}, "pw")); got != "/usr/bin/etcd" {
		t.Errorf("ServerBinary(etcd with a password) = %q", got)
	}
}

// TestFerretDBVersionMatchesScript: the binary the dbms runs is the one `make setup` builds.
func TestFerretDBVersionMatchesScript(t *testing.T) {
	b, err := os.ReadFile("../scripts/ferretdb.sh")
	if err != nil {
		t.Fatal(err)
	}
	if want := "FERRETDB_VERSION=${FERRETDB_VERSION:-" + FerretDBVersion + "}"; !strings.Contains(string(b), want) {
		t.Errorf("scripts/ferretdb.sh does not default to %s (want the line %q)", FerretDBVersion, want)
	}
}
