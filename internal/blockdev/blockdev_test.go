package blockdev

import (
	"errors"
	"testing"

	"github.com/prometheus/procfs"
)

// TestMountOf: the longest mount point that is a prefix by whole path elements wins, and of two
// mounts on one point the later (on top).
func TestMountOf(t *testing.T) {
	mounts := []*procfs.MountInfo{{MountPoint: "/", Source: "root"}, {MountPoint: "/var", Source: "var"},
		{MountPoint: "/var/lib", Source: "under"}, {MountPoint: "/var/lib", Source: "top"}}
	for path, want := range map[string]string{"/": "root", "/var": "var", "/var/log": "var", "/variable": "root",
		"/var/lib": "top", "/var/lib/x": "top", "/var/libx": "var"} {
		if got := mountOf(mounts, path); got == nil || got.Source != want {
			t.Errorf("mountOf(%s) = %+v, want the mount of %s", path, got, want)
		}
	}
}

func TestParseMajorMinor(t *testing.T) {
	if a, b, err := parseMajorMinor("259:3"); err != nil || a != 259 || b != 3 {
		t.Errorf("259:3 = %d, %d, %v", a, b, err)
	}
	for _, bad := range []string{"", "8", "8:x", "-1:0", "4294967296:0"} {
		if _, _, err := parseMajorMinor(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestProcHasNoBlockDevice: a pseudo file system is the ErrNoBlockDevice case, not a failure.
func TestProcHasNoBlockDevice(t *testing.T) {
	d, err := Resolve("/proc/self")
	if !errors.Is(err, ErrNoBlockDevice) {
		t.Errorf("Resolve(/proc/self) = %v, %v; want ErrNoBlockDevice", d, err)
	}
}
