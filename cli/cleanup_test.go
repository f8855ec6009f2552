package cli

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCrashedHere: cleanup may only touch an experiment whose lock file exists under this work
// root and is not held; one without a lock here (running under another --work-root) is alive
// as far as this work root can tell.
func TestCrashedHere(t *testing.T) {
	root := t.TempDir()
	locks := filepath.Join(root, "locks")
	if err := os.MkdirAll(locks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"dead-0000000a", "live-0000000b"} {
		if err := os.WriteFile(filepath.Join(locks, id+".lock"), []byte("1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(filepath.Join(locks, "live-0000000b.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(locks, "link-0000000c.lock")); err != nil {
		t.Fatal(err)
	}
	crashed := crashedHere(root)
	for id, want := range map[string]bool{
		"dead-0000000a":      true,  // lock file here, nobody holds it
		"live-0000000b":      false, // held by a live process
		"elsewhere-0000000d": false, // no lock under this work root
		"link-0000000c":      false, // a lock that is not a regular file
		"../../etc":          false,
		"seeds":              false,
		"locks":              false,
	} {
		if got := crashed(id); got != want {
			t.Errorf("crashed(%q) = %v, want %v", id, got, want)
		}
	}
}
