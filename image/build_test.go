package image

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
	"github.com/boxbench/boxbench/internal/testenv"
)

// TestBuild builds every database's image (a no-op when the engine already has it), checks its
// labels against its files, that a second build is a no-op, that the native host runs the same
// server version, and that a user-named image is resolved with a warning.
func TestBuild(t *testing.T) {
	s := newTestStore(t, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// debootstrap spends much of its time waiting for the mirror: the three builds overlap.
	t.Run("dbms", func(t *testing.T) {
		for _, name := range dbms.Names() {
			d, _ := dbms.Get(name)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testBuild(ctx, t, s, d)
			})
		}
	})
	noWorkDirsLeft(t, s.TempDir)
}

// newTestStore is a Store on the real engine, building under a test temp directory; it skips
// (fails in CI) where builds cannot run.
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
	s.TempDir = t.TempDir()
	return s
}

// noWorkDirsLeft fails when a build left its work directory under tmp.
func noWorkDirsLeft(t *testing.T, tmp string) {
	t.Helper()
	if left, _ := filepath.Glob(filepath.Join(tmp, "boxbench-image-*")); len(left) > 0 {
		t.Errorf("work directories left behind: %v", left)
	}
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
	if im.Ref != r.Tag() || im.Inputs != r.Hash() {
		t.Errorf("image %s inputs %s, want %s %s", im.Ref, im.Inputs, r.Tag(), r.Hash())
	}
	again, built, err := s.Build(ctx, d)
	if err != nil || built || again.ID != im.ID {
		t.Errorf("second build: built=%v id %s (first %s) err %v", built, again.ID, im.ID, err)
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
	if _, err := HostVersion(ctx, d.ServerPackage()); err == nil {
		if err := CheckNative(ctx, im); err != nil {
			t.Errorf("native check: %v", err)
		}
	}
}

// TestBuildFailureCleansUp builds from a mirror that does not exist: the error carries
// debootstrap's words and the work directory is gone.
func TestBuildFailureCleansUp(t *testing.T) {
	s := newTestStore(t, nil)
	s.Sources = []Source{{URI: "http://127.0.0.1:9/debian", Suite: DefaultSuite}}
	d, _ := dbms.Get("redis")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, _, err := s.Build(ctx, d)
	if err == nil || !strings.Contains(err.Error(), "debootstrap") {
		t.Fatalf("build from a dead mirror: %v", err)
	}
	if errors.Is(err, ErrNotBuilt) {
		t.Errorf("error should be debootstrap's: %v", err)
	}
	noWorkDirsLeft(t, s.TempDir)
}

// TestBuildCancelled interrupts a build during debootstrap (as Ctrl-C does): no process of the
// build survives, nothing stays mounted and the work directory is gone.
func TestBuildCancelled(t *testing.T) {
	s := newTestStore(t, nil)
	sources, err := HostSources(DefaultSuite)
	if err != nil {
		testenv.Skip(t, err.Error())
	}
	tmp := s.TempDir
	// An extra source changes the inputs, so the build is not found in the cache.
	s.Sources = append(sources, Source{URI: sources[0].URI, Suite: "boxbench-test-cancel"})
	d, _ := dbms.Get("redis")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	if _, _, err := s.Build(ctx, d); err == nil {
		t.Fatal("a build finished in 6 s; cannot test its interruption")
	}
	time.Sleep(200 * time.Millisecond) // the namespace's processes are reaped by the kernel
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), tmp) {
			t.Errorf("process %s of the build survives: %q", e.Name(), cmd)
		}
	}
	if m := mountsUnder(tmp); len(m) > 0 {
		t.Errorf("mounts left: %v", m)
	}
	noWorkDirsLeft(t, tmp)
}
