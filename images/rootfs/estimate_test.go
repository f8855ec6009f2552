package rootfs

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/internal/prereq"
)

// A tree that is not built is a prerequisite naming `images build` and an estimate: a typical
// figure (labelled so) while the cache has no record, the Debian base's share when no base is
// cached; after a build, the figure that build recorded in its entry.
func TestFindNeedsBuild(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	c := fakeCache(root, nil)
	d := redis(t)
	_, err := c.Find(ctx, d)
	needs, rest := prereq.Split(err)
	if rest != nil || len(needs) != 1 || !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("Find on an empty cache: %v (needs %v), want one need wrapping ErrNotBuilt", err, needs)
	}
	n := needs[0]
	if n.Command != "boxbench images build --dbms redis" || n.Takes != typicalWithBase ||
		!strings.HasPrefix(n.Basis, prereq.Typical) || !strings.Contains(n.What, "redis's root filesystem") {
		t.Errorf("need %+v", n)
	}
	if err := os.MkdirAll(filepath.Join(root, basesDir, "bookworm-amd64-0123456789abcdef"), 0o755); err != nil {
		t.Fatal(err)
	}
	if takes, basis := c.Estimate("redis"); takes != typicalOnBase || !strings.Contains(basis, "base cached") {
		t.Errorf("with a base cached: %v, %q", takes, basis)
	}
	tree, built, err := c.Get(ctx, d)
	if err != nil || !built {
		t.Fatalf("Get: %v, built %v", err, built)
	}
	if tree.BuildSeconds <= 0 {
		t.Fatalf("the build recorded %v seconds", tree.BuildSeconds)
	}
	takes, basis := c.Estimate("redis")
	if math.Abs(takes.Seconds()-tree.BuildSeconds) > 1e-6 || !strings.HasPrefix(basis, "its last build here took") {
		t.Errorf("after a build of %v s: %v, %q", tree.BuildSeconds, takes, basis)
	}
	if takes, _ := c.Estimate("mariadb"); takes != typicalOnBase {
		t.Errorf("another database's estimate took redis's record: %v", takes)
	}
}
