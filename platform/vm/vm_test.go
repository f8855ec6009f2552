package vm

import (
	"context"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/images/vmimage"
	"github.com/boxbench/boxbench/platform"
)

// A work directory whose sockets would not fit a unix socket path is refused, naming the fix,
// before anything is made.
func TestSocketPathTooLong(t *testing.T) {
	p := New(rootfs.NewCache(t.TempDir(), nil), vmimage.Cache{Root: t.TempDir()}, nil)
	var d dbms.DBMS = redis.Redis{}
	dir := "/" + strings.Repeat("x", 120)
	_, err := p.Provision(context.Background(), platform.Request{Experiment: "e", Run: "r1", WorkDir: dir, DBMS: d,
		Choice: platform.Choice{Storage: StorageRootfs, Network: NetworkNAT}})
	if err == nil || !strings.Contains(err.Error(), "shorter --work-root") {
		t.Fatalf("err = %v", err)
	}
}
