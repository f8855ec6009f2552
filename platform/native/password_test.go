package native

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestPassword: a database with a run's password refuses a client without it (over TCP and its
// socket) and accepts the client with it; the credential file is gone once the server runs, the
// config files are readable by the server's user only, and neither the start command nor the
// config hash holds the password (checkRequired). Then a data directory captured from that run
// and restored into a run with another password answers the new password only (a seed is loaded
// once and restored into every run, each with its own password). One box each, where two tests
// (TestPasswordRequired, TestPasswordAfterRestore) started two: a Cassandra start costs tens of
// CPU-seconds (issue 28).
func TestPassword(t *testing.T) {
	testenv.NeedRoot(t)
	exp := fmt.Sprintf("test-native-pw-%d", os.Getpid())
	defer func() { _ = cgroup.At("/boxbench/" + exp).Remove() }()
	for _, name := range databases.Names() {
		t.Run(name, func(t *testing.T) {
			base, _ := databases.Get(name)
			testenv.NeedCommands(t, dbms.ServerBinary(base))
			root := testenv.WorkRoot(t)
			// Two starts of the database, Cassandra's JVM among them: beside the suite's builds
			// and two other packages, its first start alone took over 4 minutes (cold CI,
			// 2026-11-27 19:59). A bound against a hang, not a speed test.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			start := func(run, pw string, seed *platform.Snapshot) (platform.Box, dbms.DBMS) {
				d := dbms.WithPassword(base, pw)
				b, err := New().Provision(ctx, platform.Request{Experiment: exp, Run: run,
					WorkDir: filepath.Join(root, run), DBMS: d, Seed: seed,
					Choice:    platform.Choice{Storage: "bind", Network: "host"},
					Resources: resource.Limits{CPUs: 1, MemoryBytes: 512 << 20}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = b.Teardown(context.Background()) })
				return b, d
			}
			old := dbms.NewPassword()
			b, d := start("pw-1-"+name, old, nil)
			checkRequired(ctx, t, name, base, d, old, b)
			if err := b.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			seed := filepath.Join(root, "seed")
			if err := b.Capture(ctx, seed); err != nil {
				t.Fatal(err)
			}
			_ = b.Teardown(ctx)
			b2, d2 := start("pw-2-"+name, dbms.NewPassword(), &platform.Snapshot{Key: "seed", Dir: seed})
			if err := d2.Ready(ctx, b2.Endpoint(), d2.Client()); err != nil {
				t.Fatalf("the restored data refuses the new password: %v", err)
			}
			c := d2.Client()
			c.Password = old
			if err := d2.Ready(ctx, b2.Endpoint(), c); err == nil {
				t.Error("the restored data still accepts the seed's password")
			}
		})
	}
}

// checkRequired: box b of database d (base with password pw) takes the password and only it,
// and keeps it out of its files, facts and config hash.
func checkRequired(ctx context.Context, t *testing.T, name string, base, d dbms.DBMS, pw string, b platform.Box) {
	t.Helper()
	ep := b.Endpoint()
	if err := d.Ready(ctx, ep, d.Client()); err != nil {
		t.Fatalf("the client with the password is refused: %v", err)
	}
	bare := base.Client()
	if name == "redis" {
		bare.Password = ""
	}
	for _, c := range []driver.Credentials{bare, {User: bare.User, Database: bare.Database, Password: "wrong"}} {
		if err := d.Ready(ctx, ep, c); err == nil {
			t.Errorf("a client with password %q was accepted", c.Password)
		}
	}
	dir := b.DataDir()
	if _, err := os.Stat(filepath.Join(dir, "boxbench-credential.sql")); !os.IsNotExist(err) {
		t.Errorf("the credential file is still in the data directory: %v", err)
	}
	for f := range d.ConfigFiles(dbms.Settings{}) {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v: others may read the password", f, st.Mode().Perm())
		}
	}
	facts := b.Facts()
	for k, v := range facts {
		if contains2(v, pw) {
			t.Errorf("fact %s holds the password", k)
		}
	}
	if want := dbms.TemplateHash(dbms.WithPassword(base, dbms.NewPassword()), dbms.Settings{MemoryBytes: 512 << 20}); facts["config_hash"] != want {
		t.Errorf("config hash %s differs from another run's %s", facts["config_hash"], want)
	}
}

func contains2(s, sub string) bool { return strings.Contains(s, sub) }
