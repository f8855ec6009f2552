package docker

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// unbuilt is Redis under a name no image of the engine carries (its recipe's hash and dbms
// label are its own), so the engine has no image of it whatever the host built.
type unbuilt struct{ dbms.DBMS }

func (unbuilt) Name() string { return "redisunbuilt" }

// Check finds a database's image missing at plan time, as the trees' platforms do, and says it
// is a prerequisite: the command that makes it and an estimate that counts the tree's build
// where the tree is missing too (an empty tree cache of the test's own). A user-named image is
// no prerequisite.
func TestCheckImagePrerequisite(t *testing.T) {
	testenv.NeedDocker(t)
	engine, err := image.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	p := New(engine, nil)
	p.images.Rootfs = rootfs.NewCache(filepath.Join(t.TempDir(), "rootfs"), nil)
	r, _ := databases.Get("redis")
	d := unbuilt{r}
	err = p.Check(context.Background(), platform.Choice{DBMS: d, Storage: StorageBind, Network: NetworkHost})
	needs, rest := prereq.Split(err)
	if rest != nil || len(needs) != 1 || !errors.Is(err, image.ErrNotBuilt) {
		t.Fatalf("Check = %v; want one prerequisite wrapping image.ErrNotBuilt", err)
	}
	n := needs[0]
	if n.Command != "boxbench images build --dbms redisunbuilt" || !strings.Contains(n.What, "root filesystem and engine image") ||
		n.Takes <= 0 || !strings.Contains(n.Basis, prereq.Typical) {
		t.Errorf("need %+v", n)
	}
	p.UseImage(d.Name(), "example.invalid/redis:never-pulled")
	if err := p.CheckImage(context.Background(), d); err != nil {
		t.Errorf("a user-named image is checked at plan time: %v", err)
	}
}
