package storage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/testkit/testenv"
)

func TestParseMounts(t *testing.T) {
	in := "/dev/vda / ext4 rw,relatime 0 0\nboxbench-tmpfs /var/tmp/box\\040bench/data tmpfs rw,size=1024k 0 0\nshort line\n"
	ms := ParseMounts(strings.NewReader(in))
	if len(ms) != 2 || ms[1].Target != "/var/tmp/box bench/data" || ms[1].FSType != "tmpfs" {
		t.Errorf("%+v", ms)
	}
}

// TestPrepareRelease makes each host-side storage for real and checks Release leaves nothing.
func TestPrepareRelease(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "losetup", "mkfs.ext4", "mkfs.xfs")
	ctx := context.Background()
	for _, tc := range []struct {
		kind string
		o    Options
		fs   string
	}{{Bind, Options{}, ""}, {Tmpfs, Options{Size: 64 << 20}, "tmpfs"}, {Blockdev, Options{Size: 300 << 20}, "ext4"}, {Blockdev, Options{Size: 300 << 20, FS: "xfs"}, "xfs"}} {
		t.Run(tc.kind+tc.o.FS, func(t *testing.T) {
			dir := filepath.Join(testenv.WorkRoot(t), "box")
			d, err := Prepare(ctx, tc.kind, dir, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if tc.fs != "" {
				m, ok := MountOf(d.Path)
				if !ok || m.Target != d.Path || m.FSType != tc.fs {
					t.Errorf("mount of %s: %+v", d.Path, m)
				}
			}
			seed := t.TempDir()
			if err := os.WriteFile(filepath.Join(seed, "f"), []byte("data"), 0o600); err != nil {
				t.Fatal(err)
			}
			method, err := Restore(ctx, seed, d.Path)
			if err != nil || (method != "copy" && method != "reflink") {
				t.Fatalf("restore: %s %v", method, err)
			}
			if b, _ := os.ReadFile(filepath.Join(d.Path, "f")); string(b) != "data" {
				t.Errorf("restored content %q", b)
			}
			if err := d.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if err := d.Release(ctx); err != nil {
				t.Fatalf("second release: %v", err)
			}
			if IsMountPoint(d.Path) {
				t.Error("still mounted")
			}
			if out, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(out), dir) {
				t.Error("a mount under the box directory remains")
			}
			if _, err := os.Stat(filepath.Join(dir, "boxbench-disk.img")); !os.IsNotExist(err) {
				t.Error("loop file remains")
			}
		})
	}
}

// TestPrepareWithin: bind storage within another box's storage root makes its own directory
// there (never one that exists, never through a link or a relative path) and Release removes
// only that directory.
func TestPrepareWithin(t *testing.T) {
	root := t.TempDir()
	other := filepath.Join(root, "victim")
	if err := os.MkdirAll(filepath.Join(other, "db"), 0o755); err != nil {
		t.Fatal(err)
	}
	box := filepath.Join(root, "r0001-nb-fsync")
	d, err := Prepare(context.Background(), Bind, box, Options{Within: other})
	if err != nil {
		t.Fatal(err)
	}
	if d.Path != filepath.Join(other, "r0001-nb-fsync") || d.Facts["within"] != other {
		t.Errorf("path %s facts %v", d.Path, d.Facts)
	}
	if _, err := Prepare(context.Background(), Bind, box, Options{Within: other}); err == nil {
		t.Error("a second box made the same directory")
	}
	os.WriteFile(filepath.Join(d.Path, "f"), []byte("x"), 0o644)
	if err := d.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Path); !os.IsNotExist(err) {
		t.Errorf("Release left %s: %v", d.Path, err)
	}
	if _, err := os.Stat(filepath.Join(other, "db")); err != nil {
		t.Errorf("Release touched the other box's data: %v", err)
	}
	link := filepath.Join(root, "link")
	os.Symlink(other, link)
	for _, within := range []string{link, "relative/dir", other + "/../victim", filepath.Join(other, "db", "missing")} {
		if _, err := Prepare(context.Background(), Bind, box+"2", Options{Within: within}); err == nil {
			t.Errorf("within %q accepted", within)
		}
	}
}
