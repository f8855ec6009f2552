package lxc

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostnet"
	"github.com/boxbench/boxbench/testkit/platformtest"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestConformance runs the platform suite on LXC with Redis, over every storage and both
// networks.
func TestConformance(t *testing.T) {
	p := needLXC(t, "redis")
	var d dbms.DBMS = redis.Redis{}
	root := testenv.WorkRoot(t)
	platformtest.Run(t, platformtest.Config{
		Platform: p, DBMS: d, WorkRoot: root, Experiment: fmt.Sprintf("pt-lxc-%d", os.Getpid()),
		Choices: []platform.Choice{{Storage: StorageRootfs, Network: NetworkBridge}, {Storage: "bind", Network: NetworkHost},
			{Storage: "tmpfs", Network: NetworkBridge}, {Storage: "blockdev", Network: NetworkHost}},
		Resources:   resource.Limits{CPUs: 1, Cpuset: "1", MemoryBytes: 512 << 20, CPUWeight: 200, WriteBps: 64 << 20},
		StorageOpts: platform.StorageOptions{BlockdevSize: 256 << 20, TmpfsSize: 256 << 20},
		Leftovers:   func(ctx context.Context, exp string) []string { return leftovers(ctx, root, exp) },
	})
}

// leftovers adds the box's interfaces and LXC's lock files to the host's boxbench places.
func leftovers(ctx context.Context, root, exp string) []string {
	left := platformtest.HostLeftovers(root, exp)
	out, _ := command.Run(ctx, "ip", "-o", "link", "show")
	for _, line := range strings.Split(string(out), "\n") {
		for _, run := range []string{"pt01", "pt02", "pt03", "pt04", "pt05", "pt06", "pt07", "pt08", "pt09", "pt10"} {
			br, veth := hostnet.Name(hostnet.PrefixBridge, exp, run), hostnet.Name(hostnet.PrefixVeth, exp, run)
			if strings.Contains(line, " "+br+":") || strings.Contains(line, " "+veth+"@") || strings.Contains(line, " "+veth+":") {
				left = append(left, "interface "+strings.Fields(line)[1])
			}
		}
	}
	locks, _ := (&Platform{}).Info().Leftovers.Leftovers(ctx, root, exp) // it never fails
	return append(left, locks...)
}

// needLXC returns the platform when LXC and the database's root filesystem are here.
func needLXC(t *testing.T, dbName string) *Platform {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "lxc-start", "lxc-attach", "lxc-stop", "lxc-execute")
	p := New(rootfs.NewCache(rootfs.DefaultRoot, nil), nil)
	d, _ := databases.Get(dbName)
	if err := p.Check(context.Background(), platform.Choice{DBMS: d, Storage: "bind", Network: NetworkHost}); err != nil {
		testenv.Skip(t, err.Error()+" (make images builds the root filesystems)")
	}
	return p
}
