package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLockNeverThroughALink: the experiment's lock is never taken through a link planted at its
// name (the pid would be written at the start of the file it reaches), and cleanup does not
// take such a link for a crashed experiment's lock.
func TestLockNeverThroughALink(t *testing.T) {
	root := t.TempDir()
	const id = "quickstart-1a2b3c4d"
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("precious contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "locks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(root, "locks", id+".lock")); err != nil {
		t.Fatal(err)
	}
	if unlock, err := lockExperiment(root, id); err == nil {
		unlock()
		t.Error("the lock was taken through a link")
	}
	if b, _ := os.ReadFile(target); string(b) != "precious contents\n" {
		t.Errorf("the link's target now holds %q", b)
	}
	if Crashed(root)(id) {
		t.Error("a link at the lock's name counts as a crashed experiment's lock")
	}
}
