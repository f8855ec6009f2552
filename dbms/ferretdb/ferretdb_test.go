package ferretdb

import (
	"os"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/dbms"
)

// TestWrappersKeepBuiltFiles: a database with a password or an idle box runs the same image,
// so its built files (part of the image's recipe) are the database's.
func TestWrappersKeepBuiltFiles(t *testing.T) {
	for _, d := range []dbms.DBMS{dbms.WithPassword(FerretDB{}, "pw"), dbms.Idle(FerretDB{}), dbms.Idle(dbms.WithPassword(FerretDB{}, "pw"))} {
		if got := dbms.BuiltFiles(d); len(got) != 1 || got[0] != FerretDBBinary {
			t.Errorf("BuiltFiles(%T) = %v, want [%s]", d, got, FerretDBBinary)
		}
	}
}

// TestFerretDBVersionMatchesScript: the binary the dbms runs is the one `make setup` builds.
func TestFerretDBVersionMatchesScript(t *testing.T) {
	b, err := os.ReadFile("../../scripts/ferretdb.sh")
	if err != nil {
		t.Fatal(err)
	}
	if want := "FERRETDB_VERSION=${FERRETDB_VERSION:-" + FerretDBVersion + "}"; !strings.Contains(string(b), want) {
		t.Errorf("scripts/ferretdb.sh does not default to %s (want the line %q)", FerretDBVersion, want)
	}
}

// TestScansPerKey: FerretDB offers the full-collection-reads warning with its stable code (the
// code earlier results files carry) and a reason that names the server.
func TestScansPerKey(t *testing.T) {
	s := dbms.WithPassword(FerretDB{}, "pw").Traits().ScansPerKey
	if s == nil || s.Code != "ferretdb_full_collection_reads" || !strings.HasPrefix(s.Why, "FerretDB 1.24") {
		t.Errorf("ScansPerKey = %+v", s)
	}
}
