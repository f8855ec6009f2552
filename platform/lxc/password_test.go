package lxc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/resource"
)

// TestPasswordOnBridge: a box on its bridge address refuses clients without the run's
// password, and accepts the one with it.
func TestPasswordOnBridge(t *testing.T) {
	for _, name := range []string{"redis", "postgresql"} {
		t.Run(name, func(t *testing.T) {
			p := needLXC(t, name)
			base, _ := dbms.Get(name)
			root := testenv.WorkRoot(t)
			exp := fmt.Sprintf("pw-lxc-%d", os.Getpid())
			t.Cleanup(func() {
				_, _ = p.Cleanup(context.Background(), root, func(id string) bool { return id == exp })
				if left := leftovers(context.Background(), root, exp); len(left) > 0 {
					t.Errorf("leftovers: %v", left)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			d := dbms.WithPassword(base, dbms.NewPassword())
			b, err := p.Provision(ctx, platform.Request{Experiment: exp, Run: "pt01", WorkDir: filepath.Join(root, exp, "pt01"),
				DBMS: d, Choice: platform.Choice{Storage: "bind", Network: NetworkBridge},
				Resources: resource.Limits{CPUs: 1, MemoryBytes: 512 << 20}})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := b.Teardown(context.Background()); err != nil {
					t.Error(err)
				}
			}()
			ep := b.Endpoint()
			if err := d.Ready(ctx, ep, d.Client()); err != nil {
				t.Fatalf("the run's password is refused at %s: %v", ep, err)
			}
			c := d.Client()
			c.Password = ""
			if err := d.Ready(ctx, ep, c); err == nil {
				t.Errorf("%s at %s accepted a client without the password", name, ep)
			}
		})
	}
}
