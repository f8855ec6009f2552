package native

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheckTempDir: a TMPDIR that does not exist, is not a directory, is relative, or sits
// under a directory others cannot search is refused naming TMPDIR, its value and what would
// be valid; boxbench creates none of it. /tmp, and a searchable directory, are accepted.
func TestCheckTempDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p := filepath.Dir(dir); p != "/"; p = filepath.Dir(p) { // t.TempDir's parent is 0700
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(p, fi.Mode().Perm()|0o011); err != nil {
				t.Fatal(err)
			}
		}
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(dir, "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(closed, "inner")
	if err := os.Mkdir(inner, 0o777); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing", "tmp")
	for _, tc := range []struct{ tmpdir, want string }{
		{missing, "TMPDIR=" + missing + " does not exist, and boxbench does not create it"},
		{file, "TMPDIR=" + file + " is a regular file, not a directory"},
		{fifo, "TMPDIR=" + fifo + " is a FIFO, not a directory"},
		{"relative/tmp", "TMPDIR=relative/tmp is not an absolute path"},
		{closed, "TMPDIR=" + closed + ": " + closed + " (mode 0700) cannot be searched by other users"},
		{inner, "TMPDIR=" + inner + ": " + closed + " (mode 0700) cannot be searched by other users"},
		{open, ""},
		{"", ""}, // unset: /tmp
	} {
		t.Setenv("TMPDIR", tc.tmpdir)
		err := checkTempDir()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("TMPDIR=%s: %v, want accepted", tc.tmpdir, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "valid: an existing directory every user can search")):
			t.Errorf("TMPDIR=%s: %v, want %q and what is valid", tc.tmpdir, err, tc.want)
		}
		if tc.tmpdir == "" {
			continue // makeRunDir would write in the host's /tmp
		}
		if err := makeRunDir(filepath.Join(os.TempDir(), "boxbench-test"), "root"); (err == nil) != (tc.want == "") {
			t.Errorf("TMPDIR=%s: makeRunDir: %v", tc.tmpdir, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("a missing TMPDIR's parent was created: %v", err)
	}

	// An existing socket directory is used again only if it is a directory of boxbench's.
	t.Setenv("TMPDIR", open)
	link := filepath.Join(open, "boxbench-link")
	if err := os.Symlink(inner, link); err != nil {
		t.Fatal(err)
	}
	if err := makeRunDir(link, "root"); err == nil || !strings.Contains(err.Error(), "a symbolic link") {
		t.Errorf("a symbolic link as the socket directory: %v, want refused", err)
	}
	again := filepath.Join(open, "boxbench-again")
	for i := 0; i < 2; i++ {
		if err := makeRunDir(again, "root"); err != nil {
			t.Errorf("makeRunDir %d: %v", i, err)
		}
	}
}
