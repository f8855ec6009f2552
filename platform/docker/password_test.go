package docker

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/platform"
)

// TestPasswordOnBridge: a box reachable on its bridge address refuses clients without the
// run's password. The first box (bind storage) is initialised with one password, its data
// captured as a seed; the second (overlay, restored through the API) gets another password,
// which replaces the seed's: the old one and none are refused.
func TestPasswordOnBridge(t *testing.T) {
	names := databases.Names()
	e := newEnv(t, names...)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			base, _ := databases.Get(name)
			// Two starts of the database, Cassandra's JVM among them: beside the suite's builds
			// and two other packages, its first start alone took over 4 minutes (cold CI,
			// 2026-11-27 19:59). A bound against a hang, not a speed test.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			pw1, pw2 := dbms.NewPassword(), dbms.NewPassword()
			r1 := e.request(dbms.WithPassword(base, pw1), "pw1-"+name, StorageBind, NetworkDirect)
			b1 := provision(ctx, t, e.p, r1)
			defer teardown(t, b1, r1)
			if err := b1.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			seed := filepath.Join(e.root, "seed-"+name)
			if err := b1.Capture(ctx, seed); err != nil {
				t.Fatal(err)
			}
			d2 := dbms.WithPassword(base, pw2)
			r2 := e.request(d2, "pw2-"+name, StorageOverlay, NetworkDirect)
			r2.Seed = &platform.Snapshot{Key: "seed", Dir: seed}
			b2 := provision(ctx, t, e.p, r2)
			defer teardown(t, b2, r2)
			ep := b2.Endpoint()
			if err := d2.Ready(ctx, ep, d2.Client()); err != nil {
				t.Fatalf("the run's password is refused at %s: %v", ep, err)
			}
			for _, pw := range []string{"", pw1} {
				c := d2.Client()
				c.Password = pw
				if err := d2.Ready(ctx, ep, c); err == nil {
					t.Errorf("%s at %s accepted password %q (want only the run's)", name, ep, pw)
				}
			}
		})
	}
}
