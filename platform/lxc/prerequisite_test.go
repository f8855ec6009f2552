package lxc

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// What a command installs or builds is a prerequisite of Check, not a reason: LXC's tools not
// on PATH (an empty one here) and the database's tree not in the cache (an empty one of the
// test's own) give exactly the two commands, and nothing else refuses the choice.
func TestCheckPrerequisites(t *testing.T) {
	if !kernelHas("overlay") {
		testenv.Skip(t, "the kernel has no overlayfs, a reason no command removes")
	}
	t.Setenv("PATH", t.TempDir())
	p := New(rootfs.NewCache(filepath.Join(t.TempDir(), "rootfs"), nil), nil)
	d, _ := databases.Get("redis")
	needs, rest := prereq.Split(p.Check(context.Background(), platform.Choice{DBMS: d, Storage: StorageRootfs, Network: NetworkHost}))
	if rest != nil {
		t.Fatalf("a reason besides the needs: %v", rest)
	}
	var cmds []string
	for _, n := range needs {
		cmds = append(cmds, n.Command)
	}
	if len(cmds) != 2 || cmds[0] != "apt-get install -y lxc" || cmds[1] != "boxbench images build --dbms redis" {
		t.Errorf("needs %q, want LXC's install and redis's tree", cmds)
	}
}
