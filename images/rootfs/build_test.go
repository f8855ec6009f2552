package rootfs

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	redisdb "github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// newRealCache is a Cache that really runs debootstrap, under a test directory; it skips (fails
// in CI) where builds cannot run.
func newRealCache(t *testing.T, log *slog.Logger) *Cache {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "debootstrap", "unshare", "chroot")
	return NewCache(t.TempDir(), log)
}

// noWorkDirsLeft fails when a build (of a tree or of the Debian base) left its work directory
// under root.
func noWorkDirsLeft(t *testing.T, root string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(root, tmpPrefix+"*"))
	base, _ := filepath.Glob(filepath.Join(root, basesDir, tmpPrefix+"*"))
	if left = append(left, base...); len(left) > 0 {
		t.Errorf("work directories left behind: %v", left)
	}
}

// TestBuildReal builds the smallest database's tree for real and checks that what the Tree
// says is what its files hold, that a second Get finds it, and that the native host runs the
// same server version.
func TestBuildReal(t *testing.T) {
	c := newRealCache(t, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var d dbms.DBMS = redisdb.Redis{}
	tree, built, err := c.Get(ctx, d)
	if err != nil || !built {
		t.Fatalf("Get: built=%v %v", built, err)
	}
	if tree.ServerVersion == "" || tree.PackageVersions["stress-ng"] == "" || tree.UID == 0 {
		t.Errorf("tree incomplete: %+v", tree)
	}
	if _, err := os.Stat(filepath.Join(tree.Dir, "usr/bin/redis-server")); err != nil {
		t.Errorf("server binary: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(tree.Dir, "var/cache/apt/archives/*.deb")); len(files) > 0 {
		t.Errorf("not trimmed: %d .deb files left", len(files))
	}
	if _, err := os.Stat(filepath.Join(tree.Dir, "usr/sbin/policy-rc.d")); err == nil {
		t.Error("policy-rc.d left in the tree: services would never start in it")
	}
	again, built, err := c.Get(ctx, d)
	if err != nil || built || again.Dir != tree.Dir {
		t.Errorf("second Get: built=%v %s %v", built, again.Dir, err)
	}
	if host, err := HostVersion(ctx, d.ServerPackage()); err == nil && host != tree.ServerVersion {
		t.Errorf("host runs %s %s, tree has %s", d.ServerPackage(), host, tree.ServerVersion)
	}
	noWorkDirsLeft(t, c.Root)
	if err := c.Remove(ctx, tree.Hash); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Find(ctx, d); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Find after Remove: %v", err)
	}
	noWorkDirsLeft(t, c.Root)
}

// TestBuildFailureCleansUp builds from a mirror that does not exist: the error carries
// debootstrap's words and the work directory is gone.
func TestBuildFailureCleansUp(t *testing.T) {
	c := newRealCache(t, nil)
	c.Sources = []Source{{URI: "http://127.0.0.1:9/debian", Suite: DefaultSuite}}
	var d dbms.DBMS = redisdb.Redis{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, _, err := c.Get(ctx, d)
	if err == nil || !strings.Contains(err.Error(), "debootstrap") {
		t.Fatalf("build from a dead mirror: %v", err)
	}
	if errors.Is(err, ErrNotBuilt) {
		t.Errorf("error should be debootstrap's: %v", err)
	}
	noWorkDirsLeft(t, c.Root)
}

// TestBuildCancelled interrupts a build during debootstrap (as Ctrl-C does): no process of the
// build survives, nothing stays mounted and the work directory is gone.
func TestBuildCancelled(t *testing.T) {
	c := newRealCache(t, nil)
	sources, err := HostSources(DefaultSuite)
	if err != nil {
		testenv.Skip(t, err.Error())
	}
	c.Sources = sources
	var d dbms.DBMS = redisdb.Redis{}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	if _, _, err := c.Get(ctx, d); err == nil {
		t.Fatal("a build finished in 6 s; cannot test its interruption")
	}
	time.Sleep(200 * time.Millisecond) // the namespace's processes are reaped by the kernel
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), c.Root) {
			t.Errorf("process %s of the build survives: %q", e.Name(), cmd)
		}
	}
	if m := mountsUnder(c.Root); len(m) > 0 {
		t.Errorf("mounts left: %v", m)
	}
	noWorkDirsLeft(t, c.Root)
}
