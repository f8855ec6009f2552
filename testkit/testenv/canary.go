package testenv

import (
	"os"
	"testing"
	"time"
)

// Canary writes a file at path that nothing may change (a stand-in for someone else's) and
// returns its check, which fails the test when its bytes or its modification time changed or
// it is gone.
func Canary(t testing.TB, path string) (check func()) {
	t.Helper()
	const content = "untouched\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		b, err := os.ReadFile(path)
		fi, serr := os.Stat(path)
		if err != nil || serr != nil || string(b) != content || !fi.ModTime().Equal(old) {
			t.Errorf("canary %s changed: %q %v %v", path, b, err, serr)
		}
	}
}
