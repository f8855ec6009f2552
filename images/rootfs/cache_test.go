package rootfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
)

// The cache tests replace debootstrap (the process boundary) with fakeBuild, which writes the
// two files a Tree is read from.

var fixtureSources = []Source{{URI: "http://mirror.example.invalid/debian", Suite: "bookworm"}}

func fakeCache(root string, log *slog.Logger) *Cache {
	c := NewCache(root, log)
	c.Sources = fixtureSources
	c.build = fakeBuild
	return c
}

// fakeBuild makes a root filesystem holding every recipe package and a redis account.
func fakeBuild(_ context.Context, r Recipe, dir string) error {
	var status bytes.Buffer
	for _, p := range r.Packages {
		v := r.Pins[p]
		if v == "" {
			v = "1.0-test"
		}
		fmt.Fprintf(&status, "Package: %s\nStatus: install ok installed\nVersion: %s\n\n", p, v)
	}
	for name, data := range map[string][]byte{
		"var/lib/dpkg/status": status.Bytes(),
		"etc/passwd":          []byte("root:x:0:0:root:/root:/bin/bash\nredis:x:100:101::/var/lib/redis:/usr/sbin/nologin\n"),
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func redis(t *testing.T) dbms.DBMS {
	d, err := databases.Get("redis")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGetPublishesAtomically: a tree is invisible while it is built, a crashed build's work
// directory and a broken entry are never found, and the next Get removes both and publishes a
// complete tree.
func TestGetPublishesAtomically(t *testing.T) {
	ctx, root, d := context.Background(), t.TempDir(), redis(t)
	c := fakeCache(root, nil)
	r, err := c.Recipe(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := entryName(r)
	// A crash after the build and before the rename: a complete tree in a work directory.
	crashed := filepath.Join(root, tmpPrefix+"build-"+name+"-12345")
	if err := fakeBuild(ctx, r, filepath.Join(crashed, treeDir)); err != nil {
		t.Fatal(err)
	}
	// An entry someone emptied by hand.
	if err := os.MkdirAll(filepath.Join(root, name, treeDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Find(ctx, d); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("Find with a crashed build and a broken entry: %v, want ErrNotBuilt", err)
	}
	if l, err := c.List(); err != nil || len(l) != 0 {
		t.Fatalf("List: %v %v", l, err)
	}
	c.build = func(ctx context.Context, r Recipe, dir string) error {
		if _, err := c.Find(ctx, d); !errors.Is(err, ErrNotBuilt) {
			t.Errorf("Find during the build: %v, want ErrNotBuilt", err)
		}
		return fakeBuild(ctx, r, dir)
	}
	tree, built, err := c.Get(ctx, d)
	if err != nil || !built {
		t.Fatalf("Get: built=%v %v", built, err)
	}
	if _, err := os.Stat(crashed); !os.IsNotExist(err) {
		t.Errorf("crashed build's directory still there: %v", err)
	}
	found, err := c.Find(ctx, d)
	if err != nil || found.Dir != filepath.Join(root, name, treeDir) || found.Hash != r.Hash() {
		t.Fatalf("Find after Get: %+v %v", found, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, name, recipeFile)); err != nil || string(b) != r.JSON() {
		t.Errorf("recipe.json: %q %v", b, err)
	}
	l := tree.Labels()
	if l[LabelInputs] != r.Hash() || l[LabelDBMS] != "redis" || l[LabelUID] != "100" || l[LabelGID] != "101" ||
		l[LabelServerVersion] != found.ServerVersion || l[LabelRecipe] != r.JSON() || len(l) != 10 {
		t.Errorf("labels %v", l)
	}
	if got := ParseVersions(l[LabelPackages]); len(got) != len(r.Packages) {
		t.Errorf("packages label %q", l[LabelPackages])
	}
	if _, built, err := c.Get(ctx, d); err != nil || built {
		t.Errorf("second Get: built=%v %v", built, err)
	}
}

// TestGetFailedBuild: a failing build publishes nothing and leaves no work directory.
func TestGetFailedBuild(t *testing.T) {
	ctx, root, d := context.Background(), t.TempDir(), redis(t)
	c := fakeCache(root, nil)
	c.build = func(ctx context.Context, r Recipe, dir string) error {
		if err := fakeBuild(ctx, r, dir); err != nil {
			return err
		}
		return errors.New("apt-get: fake failure")
	}
	if _, _, err := c.Get(ctx, d); err == nil || !strings.Contains(err.Error(), "fake failure") {
		t.Fatalf("Get: %v", err)
	}
	if _, err := c.Find(ctx, d); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Find after a failed build: %v", err)
	}
	noWorkDirsLeft(t, root)
}

// TestConcurrentGetBuildsOnce starts two processes that Get the same recipe at once. The first
// one's build waits until the second is waiting for the lock, so without the lock both would
// build.
func TestConcurrentGetBuildsOnce(t *testing.T) {
	root := t.TempDir()
	var outs [2]bytes.Buffer
	var cmds [2]*exec.Cmd
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperGet$", "-test.v")
		cmds[i].Env = append(os.Environ(), "BOXBENCH_ROOTFS_HELPER="+root)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	built := 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i].String())
		}
		if strings.Contains(outs[i].String(), "GET built=true") {
			built++
		}
	}
	b, _ := os.ReadFile(filepath.Join(root, "builds"))
	if built != 1 || strings.Count(string(b), "\n") != 1 {
		t.Errorf("%d processes say they built, %d builds ran; want 1\n%s\n%s", built,
			strings.Count(string(b), "\n"), outs[0].String(), outs[1].String())
	}
}

// TestHelperGet is one process of TestConcurrentGetBuildsOnce.
func TestHelperGet(t *testing.T) {
	root := os.Getenv("BOXBENCH_ROOTFS_HELPER")
	if root == "" {
		t.Skip("a helper process of TestConcurrentGetBuildsOnce")
	}
	logPath := filepath.Join(root, "log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	c := fakeCache(root, slog.New(slog.NewTextHandler(logf, nil)))
	c.build = func(ctx context.Context, r Recipe, dir string) error {
		f, err := os.OpenFile(filepath.Join(root, "builds"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprintf(f, "%d\n", os.Getpid())
		f.Close()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if b, _ := os.ReadFile(logPath); bytes.Contains(b, []byte("waiting for another build")) {
				return fakeBuild(ctx, r, dir)
			}
			if time.Now().After(deadline) {
				return errors.New("the other process never waited for the lock")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	tree, built, err := c.Get(context.Background(), redis(t))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("GET built=%v %s\n", built, tree.Dir)
}

func TestNamesValidated(t *testing.T) {
	for _, n := range []string{"", "../etc", "a/b", "Redis", "re-dis", ".hidden", strings.Repeat("a", 40)} {
		if _, err := entryName(Recipe{DBMS: n}); err == nil {
			t.Errorf("dbms name %q accepted", n)
		}
	}
	c := fakeCache(t.TempDir(), nil)
	for _, h := range []string{"", "../../etc", strings.Repeat("A", 64), strings.Repeat("a", 16)} {
		if err := c.Remove(context.Background(), h); err == nil || errors.Is(err, ErrNotBuilt) {
			t.Errorf("hash %q: %v", h, err)
		}
	}
	if err := c.Remove(context.Background(), strings.Repeat("a", 64)); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("absent hash: %v", err)
	}
	for base, want := range map[string]string{
		".boxbench-build-redis-0123456789abcdef-42":  "redis-0123456789abcdef",
		".boxbench-remove-redis-0123456789abcdef-42": "redis-0123456789abcdef",
		".boxbench-build-..-0123456789abcdef-42":     "",
		"redis-0123456789abcdef":                     "",
	} {
		if got := staleEntry(base); got != want {
			t.Errorf("staleEntry(%q) = %q, want %q", base, got, want)
		}
	}
}

// TestPrune removes rejected trees and dead work directories, and keeps the rest.
func TestPrune(t *testing.T) {
	ctx, root, d := context.Background(), t.TempDir(), redis(t)
	c := fakeCache(root, nil)
	tree, _, err := c.Get(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(root, tmpPrefix+"build-mariadb-0123456789abcdef-7")
	if err := os.MkdirAll(filepath.Join(stale, treeDir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if removed, err := c.Prune(ctx, func(Tree) bool { return true }); err != nil || len(removed) != 1 || removed[0] != stale {
		t.Errorf("Prune keeping every tree: %v %v", removed, err)
	}
	if l, _ := c.List(); len(l) != 1 || l[0].Dir != tree.Dir {
		t.Fatalf("List: %+v", l)
	}
	if err := c.Remove(ctx, tree.Hash); err != nil {
		t.Fatal(err)
	}
	if l, _ := c.List(); len(l) != 0 {
		t.Errorf("List after Remove: %+v", l)
	}
	noWorkDirsLeft(t, root)
}
