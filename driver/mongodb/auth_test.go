package mongodb

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/ferretdb"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/testkit/testdb"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestAuthentication: against FerretDB with a run's password (as the runner starts it), New
// with the password works, and New with a wrong password or none fails with the server's
// refusal, not a hang or a protocol error; a pool of the right client keeps working after the
// refused ones.
func TestAuthentication(t *testing.T) {
	testenv.NeedRoot(t)
	var base dbms.DBMS = ferretdb.FerretDB{}
	testenv.NeedCommands(t, dbms.ServerBinary(base), "setpriv")
	pw := dbms.NewPassword()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	box, d := testdb.Start(t, dbms.WithPassword(base, pw))
	ep := box.Endpoint()

	good, err := New(ctx, ep, d.Client(), 1)
	if err != nil {
		t.Fatalf("the right password is refused: %v", err)
	}
	defer good.Close()
	tbl := driver.Table{Name: "authtable", FieldCount: 1}
	if err := good.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ what, password string }{{"wrong password", "wrong"}, {"no password", ""}} {
		cred := d.Client()
		cred.Password = c.password
		db, err := New(ctx, ep, cred, 1)
		if err == nil {
			db.Close()
			t.Errorf("%s: New succeeded", c.what)
			continue
		}
		var se *ServerError
		if !errors.As(err, &se) || errors.Is(err, errProtocol) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want the server's refusal (*ServerError)", c.what, err)
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("%s: the error holds the run's password: %v", c.what, err)
		}
		t.Logf("%s: %v", c.what, err)
	}

	if err := good.Insert(ctx, "user1", tbl.Fields(), [][]byte{[]byte("v")}); err != nil {
		t.Errorf("insert with the right password: %v", err)
	}
	if err := good.Read(ctx, "user1", nil); err != nil {
		t.Errorf("read with the right password: %v", err)
	}
}
