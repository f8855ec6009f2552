package image

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestBuild builds every database's image (a no-op when the engine already has it), checks its
// labels against its files, that a second build is a no-op even without the tree, that the
// native host runs the same server version, and that a user-named image is resolved with a
// warning.
func TestBuild(t *testing.T) {
	s := newTestStore(t, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// debootstrap spends much of its time waiting for the mirror: the three builds overlap.
	t.Run("dbms", func(t *testing.T) {
		for _, name := range databases.Names() {
			d, _ := databases.Get(name)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testBuild(ctx, t, s, d)
			})
		}
	})
}

// newTestStore is a Store on the real engine with a rootfs cache under a test directory; it
// skips (fails in CI) where builds cannot run.
func newTestStore(t *testing.T, log *slog.Logger) *Store {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "debootstrap", "unshare")
	engine, err := Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	s := NewStore(engine, log)
	s.Rootfs.Root = t.TempDir()
	return s
}

func testBuild(ctx context.Context, t *testing.T, s *Store, d dbms.DBMS) {
	im, _, err := s.Build(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if im.ServerVersion == "" || im.PackageVersions[d.ServerPackage()] != im.ServerVersion ||
		im.PackageVersions["fio"] == "" || im.UID == 0 || im.User != d.User() {
		t.Errorf("image labels incomplete: %+v", im)
	}
	r, _ := s.Recipe(ctx, d)
	if im.Ref != Tag(r) || im.Inputs != r.Hash() {
		t.Errorf("image %s inputs %s, want %s %s", im.Ref, im.Inputs, Tag(r), r.Hash())
	}
	// The engine has the image now: a store whose rootfs cache is empty finds it, builds nothing.
	empty := *s
	empty.Rootfs = rootfs.NewCache(t.TempDir(), s.Log)
	again, built, err := empty.Build(ctx, d)
	if err != nil || built || again.ID != im.ID {
		t.Errorf("second build: built=%v id %s (first %s) err %v", built, again.ID, im.ID, err)
	}
	if trees, err := empty.Rootfs.List(); err != nil || len(trees) != 0 {
		t.Errorf("second build made trees: %v %v", trees, err)
	}
	res, err := s.Resolve(ctx, d)
	if err != nil || res.ID != im.ID {
		t.Errorf("Resolve: %s %v", res.ID, err)
	}
	if res, err := Resolve(ctx, d); err != nil || res.ID != im.ID {
		t.Errorf("image.Resolve: %s %v", res.ID, err)
	}
	// The labels say what the files hold.
	named, err := s.Named(ctx, im.Ref, d)
	if err != nil {
		t.Fatal(err)
	}
	if named.UID != im.UID || named.GID != im.GID || named.ServerVersion != im.ServerVersion ||
		len(named.PackageVersions) != len(im.PackageVersions) {
		t.Errorf("files say uid %d gid %d %s (%d packages); labels say %d %d %s (%d)",
			named.UID, named.GID, named.ServerVersion, len(named.PackageVersions),
			im.UID, im.GID, im.ServerVersion, len(im.PackageVersions))
	}
	if len(named.Warnings) == 0 || !strings.Contains(named.Warnings[0], "named by the user") {
		t.Errorf("user-named image without warning: %v", named.Warnings)
	}
	if _, err := rootfs.HostVersion(ctx, d.ServerPackage()); err == nil {
		if err := CheckNative(ctx, im); err != nil {
			t.Errorf("native check: %v", err)
		}
	}
}
