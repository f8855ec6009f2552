package lxc

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestPasswordOnBridge: a box on its bridge address listens on that address only, refuses
// clients without the run's password, and accepts the one with it.
func TestPasswordOnBridge(t *testing.T) {
	for _, name := range []string{"redis", "postgresql", "mariadb"} {
		t.Run(name, func(t *testing.T) {
			p := needLXC(t, name)
			base, _ := databases.Get(name)
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
			if addrs := listening(t, exp, "pt01"); len(addrs) == 0 {
				t.Errorf("no listening socket found in the box's network namespace")
			} else {
				for _, a := range addrs {
					if a != ep.Host {
						t.Errorf("%s listens on %s, want only %s (the address the client uses)", name, a, ep.Host)
					}
				}
			}
			c := d.Client()
			c.Password = ""
			if err := d.Ready(ctx, ep, c); err == nil {
				t.Errorf("%s at %s accepted a client without the password", name, ep)
			}
		})
	}
}

// listening lists the local IPv4 and IPv6 addresses of the TCP sockets listening in the
// network namespace of the box's processes (the run's cgroup, on v1 the memory hierarchy's),
// read from /proc/<pid>/net/tcp{,6} (state 0A is LISTEN).
func listening(t *testing.T, exp, run string) []string {
	t.Helper()
	procs, err := os.ReadFile(filepath.Join(cgroup.Root, "boxbench", exp, run, "cgroup.procs"))
	if err != nil {
		procs, err = os.ReadFile(filepath.Join(cgroup.Root, "memory", "boxbench", exp, run, "cgroup.procs"))
	}
	pids := strings.Fields(string(procs))
	if err != nil || len(pids) == 0 {
		t.Fatalf("no process in the box's cgroup: %v", err)
	}
	pid := pids[0]
	var addrs []string
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%s/net/%s", pid, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 4 || fs[3] != "0A" {
				continue
			}
			hexIP, _, _ := strings.Cut(fs[1], ":")
			raw, err := hex.DecodeString(hexIP)
			if err != nil {
				continue
			}
			// The kernel prints each 32-bit word in host (little-endian) order.
			for i := 0; i+4 <= len(raw); i += 4 {
				raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
			}
			ip, _ := netip.AddrFromSlice(raw)
			addrs = append(addrs, ip.Unmap().String())
		}
	}
	return addrs
}
