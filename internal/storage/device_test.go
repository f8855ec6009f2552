package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/testkit/testenv"
)

func TestParseMountinfoAndSwaps(t *testing.T) {
	mi := "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n" +
		"40 22 7:3 / /var/tmp/a\\040b rw - ext4 /dev/loop3 rw\n"
	got := mountedDevices(strings.NewReader(mi))
	if got["254:0"] != "/" || got["7:3"] != "/var/tmp/a b" {
		t.Errorf("%v", got)
	}
	sw := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t1048572\t\t0\t\t100\n"
	if s := swapDevices(strings.NewReader(sw)); len(s) != 1 || s[0] != "/dev/zram0" {
		t.Errorf("%v", s)
	}
}

// TestCheckDeviceRefusesWithoutTouching calls only the check (never Prepare), so that a bug in
// it can never format the disk under /.
func TestCheckDeviceRefusesWithoutTouching(t *testing.T) {
	testenv.NeedRoot(t)
	ctx := context.Background()
	root, ok := MountOf("/")
	if !ok || !strings.HasPrefix(root.Source, "/dev/") {
		testenv.Skip(t, "/ is not on a /dev block device here")
	}
	regular := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(regular, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	// A regular file under /dev (tmpfs), to reach the block-device test itself.
	devFile := filepath.Join("/dev/shm", "boxbench-test-"+filepath.Base(t.TempDir()))
	if err := os.WriteFile(devFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(devFile)
	for _, tc := range []struct{ dev, want string }{
		{root.Source, "mounted on /"},
		{regular, "not an absolute path under /dev"},
		{devFile, "is not a block device"},
		{"/dev/../etc/passwd", "not an absolute path under /dev"},
		{"-F", "not an absolute path under /dev"},
		{"/dev/null", "is not a block device"},
	} {
		_, err := CheckDevice(ctx, tc.dev, nil, true)
		if !errors.Is(err, ErrDeviceRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a refusal saying %q", tc.dev, err, tc.want)
		}
	}
}

// TestPrepareNamedDevice uses a real loop device over a file: refused while mounted, refused
// while it holds ext4 without wipe, accepted (and the decision recorded) with wipe; refused
// when it is the device under a protected path.
func TestPrepareNamedDevice(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "losetup", "mkfs.ext4", "blkid", "wipefs")
	ctx := context.Background()
	work := testenv.WorkRoot(t)
	img := filepath.Join(work, "dev.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := command.Run(ctx, "losetup", "--find", "--show", img)
	if err != nil {
		t.Fatal(err)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() { _, _ = command.Run(context.Background(), "losetup", "-d", loop) })

	// Empty device: accepted without wipe.
	if _, err := CheckDevice(ctx, loop, nil, false); err != nil {
		t.Fatalf("an empty loop device was refused: %v", err)
	}
	if _, err := command.Run(ctx, "mkfs.ext4", "-q", "-F", loop); err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(work, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := command.Run(ctx, "mount", loop, mnt); err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(ctx, Blockdev, filepath.Join(work, "box1"), Options{Device: loop, Wipe: true})
	_, _ = command.Run(ctx, "umount", mnt)
	if !errors.Is(err, ErrDeviceRefused) || !strings.Contains(err.Error(), "is mounted on "+mnt) {
		t.Errorf("mounted device: got %v", err)
	}
	if _, err := Prepare(ctx, Blockdev, filepath.Join(work, "box2"), Options{Device: loop}); !errors.Is(err, ErrDeviceRefused) ||
		!strings.Contains(err.Error(), "TYPE=ext4") || !strings.Contains(err.Error(), "wipe: true") {
		t.Errorf("ext4 without wipe: got %v", err)
	}
	// A protected path on the device (the results directory, say) is refused even with wipe.
	if _, err := command.Run(ctx, "mount", loop, mnt); err != nil {
		t.Fatal(err)
	}
	_, err = CheckDevice(ctx, loop, []string{mnt}, true)
	_, _ = command.Run(ctx, "umount", mnt)
	if !errors.Is(err, ErrDeviceRefused) {
		t.Errorf("device under a protected path: got %v", err)
	}
	d, err := Prepare(ctx, Blockdev, filepath.Join(work, "box3"), Options{Device: loop, Wipe: true})
	if err != nil {
		t.Fatalf("ext4 with wipe: %v", err)
	}
	if !strings.Contains(d.Facts["device_signature"], "TYPE=ext4") || !strings.Contains(d.Facts["device_check"], "wipe: true") || d.Facts["fs"] != "ext4" {
		t.Errorf("facts: %v", d.Facts)
	}
	if err := d.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if IsMountPoint(d.Path) {
		t.Error("still mounted after Release")
	}
}
