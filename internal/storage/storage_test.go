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
