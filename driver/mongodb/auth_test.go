package mongodb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/cgroup"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/native"
)

// TestAuthentication: against FerretDB with a run's password (as the runner starts it), New
// with the password works, and New with a wrong password or none fails with the server's
// refusal, not a hang or a protocol error; a pool of the right client keeps working after the
// refused ones.
func TestAuthentication(t *testing.T) {
	testenv.NeedRoot(t)
	base := dbms.FerretDB{}
	testenv.NeedCommands(t, dbms.ServerBinary(base), "setpriv")
	exp := fmt.Sprintf("test-mongowire-auth-%d", os.Getpid())
	pw := dbms.NewPassword()
	d := dbms.WithPassword(base, pw)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	box, err := native.New().Provision(ctx, platform.Request{Experiment: exp, Run: "auth",
		WorkDir: filepath.Join(testenv.WorkRoot(t), exp), DBMS: d,
		Choice: platform.Choice{Storage: "bind", Network: "host"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := box.Teardown(context.Background()); err != nil {
			t.Errorf("teardown: %v", err)
		}
		_ = cgroup.Remove(cgroup.Ref{Version: cgroup.HostVersion(), Path: "/boxbench/" + exp})
	})
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
