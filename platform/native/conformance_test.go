package native

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/platformtest"
	"github.com/boxbench/boxbench/testkit/testenv"
)

func exists(path string) bool { _, err := os.Lstat(path); return err == nil }

// TestConformance runs the platform suite on the native platform with Redis.
func TestConformance(t *testing.T) {
	testenv.NeedRoot(t)
	var d dbms.DBMS = redis.Redis{}
	testenv.NeedCommands(t, dbms.ServerBinary(d))
	root := testenv.WorkRoot(t)
	platformtest.Run(t, platformtest.Config{
		Platform: New(), DBMS: d, WorkRoot: root, Experiment: fmt.Sprintf("pt-native-%d", os.Getpid()),
		Choices: []platform.Choice{{Storage: "bind", Network: "host"}, {Storage: "tmpfs", Network: "unix"},
			{Storage: "blockdev", Network: "host"}},
		Resources:   resource.Limits{CPUs: 1, Cpuset: "0", MemoryBytes: 512 << 20, CPUWeight: 200, WriteBps: 64 << 20},
		StorageOpts: platform.StorageOptions{BlockdevSize: 256 << 20, TmpfsSize: 256 << 20},
		Leftovers: func(_ context.Context, exp string) []string {
			left := platformtest.HostLeftovers(root, exp)
			for i := 1; i <= 20; i++ { // the suite's runs are pt01, pt02, …
				if dir := runDirFor(filepath.Join(root, exp, fmt.Sprintf("pt%02d", i))); exists(dir) {
					left = append(left, "socket directory "+dir)
				}
			}
			return left
		},
	})
}
