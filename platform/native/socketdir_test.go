package native

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestSocketDirOfAnother: the cleanup of a crashed experiment removes its boxes' socket
// directories (at a predictable name in the world-writable temporary directory) only when they
// can be boxbench's: one another user made there, or one writable by all, is left alone; the
// control, root's, is removed.
func TestSocketDirOfAnother(t *testing.T) {
	testenv.NeedRoot(t)
	exp := fmt.Sprintf("sd-%d-1a2b3c4d", os.Getpid())
	for _, c := range []struct {
		name   string
		uid    int
		mode   os.FileMode
		remove bool
	}{{"another user's", 65534, 0o700, false}, {"writable by all", 0, 0o777, false}, {"root's", 0, 0o700, true}} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			run := filepath.Join(root, exp, "r0001")
			if err := os.MkdirAll(run, 0o755); err != nil {
				t.Fatal(err)
			}
			dir := runDirFor(run)
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			if err := os.Mkdir(dir, c.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "theirs"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, c.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(dir, c.uid, c.uid); err != nil {
				t.Fatal(err)
			}
			gone, err := (&Platform{}).CleanupBoxes(context.Background(), root, func(e string) bool { return e == exp })
			_, statErr := os.Stat(filepath.Join(dir, "theirs"))
			if removed := statErr != nil; removed != c.remove {
				t.Errorf("socket directory %s (uid %d, mode %v): removed %v, want %v (cleanup: %v, %v)", dir, c.uid, c.mode, removed, c.remove, gone, err)
			}
		})
	}
}
