package rootfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyFiles: a recipe's file lands in the tree at its own path, executable, when its
// sha256 is the recipe's; a changed file, or a path that is not clean and absolute, fails.
func TestCopyFiles(t *testing.T) {
	host := t.TempDir()
	src := filepath.Join(host, "bin", "server")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := fileHash(src)
	if err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	if err := copyFiles(Recipe{Files: map[string]string{src: sum}}, tree); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(tree, src))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("copied file: %v %v", st, err)
	}
	bad := []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{src: strings.Repeat("0", 64)}, "the recipe says"},
		{map[string]string{"relative/server": sum}, "not a clean absolute path"},
		{map[string]string{host + "/bin/../bin/server": sum}, "not a clean absolute path"},
	}
	for _, b := range bad {
		err := copyFiles(Recipe{Files: b.files}, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("copyFiles(%v) = %v, want %q", b.files, err, b.want)
		}
	}
	if _, err := fileHash(host); err == nil {
		t.Error("fileHash of a directory succeeded")
	}
}
