package vmimage

import (
	"os"
	"path/filepath"
	"testing"
)

// An outdated entry of the same database and variant goes, with what an interrupted build left;
// the current entry, other variants, other databases and foreign files stay.
func TestRemoveOutdated(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"redis-0123456789abcdef", "redis-aaaaaaaaaaaaaaaa", "redis-bbbbbbbbbbbbbbbb.tmp",
		"redis-docker-cccccccccccccccc", "postgresql-dddddddddddddddd", "notours"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeOutdated(filepath.Join(root, "redis-0123456789abcdef"))
	for d, want := range map[string]bool{"redis-0123456789abcdef": true, "redis-aaaaaaaaaaaaaaaa": false,
		"redis-bbbbbbbbbbbbbbbb.tmp": false, "redis-docker-cccccccccccccccc": true, "postgresql-dddddddddddddddd": true, "notours": true} {
		_, err := os.Stat(filepath.Join(root, d))
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", d, got, want)
		}
	}
}
