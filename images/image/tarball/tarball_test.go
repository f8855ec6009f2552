package tarball

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRoundTrip writes a tree with every kind of entry a data directory or a root filesystem
// holds, with a forced owner, and extracts it as the engine's copy would name it.
func TestRoundTrip(t *testing.T) {
	src := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(src, "base/1"), 0o700))
	must(t, os.WriteFile(filepath.Join(src, "base/1/file"), []byte("data"), 0o600))
	must(t, os.WriteFile(filepath.Join(src, "PG_VERSION"), []byte("15\n"), 0o640))
	must(t, os.Symlink("base/1/file", filepath.Join(src, "link")))
	must(t, os.Link(filepath.Join(src, "PG_VERSION"), filepath.Join(src, "hard")))
	var buf bytes.Buffer
	w := NewWriter(&buf, &Owner{UID: 4242, GID: 4343})
	must(t, w.Dir("db", 0o700))
	must(t, w.Tree(src, "db"))
	must(t, w.File("db/extra.conf", 0o644, []byte("x = 1\n")))
	must(t, w.Close())

	names := map[string]byte{}
	tr := tar.NewReader(bytes.NewReader(buf.Bytes()))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		must(t, err)
		if h.Uid != 4242 || h.Gid != 4343 || h.Uname != "" {
			t.Errorf("%s owned by %d:%d %q", h.Name, h.Uid, h.Gid, h.Uname)
		}
		names[h.Name] = h.Typeflag
	}
	for name, typ := range map[string]byte{"db/": tar.TypeDir, "db/base/1/": tar.TypeDir, "db/base/1/file": tar.TypeReg,
		"db/link": tar.TypeSymlink, "db/extra.conf": tar.TypeReg} {
		if names[name] != typ {
			t.Errorf("entry %s: type %q, want %q (all: %v)", name, names[name], typ, names)
		}
	}
	if names["db/PG_VERSION"]+names["db/hard"] != tar.TypeReg+tar.TypeLink {
		t.Errorf("hard link pair not kept: %v", names)
	}

	dst := t.TempDir()
	must(t, Extract(bytes.NewReader(buf.Bytes()), dst, 1))
	for name, want := range map[string]string{"base/1/file": "data", "PG_VERSION": "15\n", "hard": "15\n", "extra.conf": "x = 1\n", "link": "data"} {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	fi, err := os.Stat(filepath.Join(dst, "PG_VERSION"))
	must(t, err)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if os.Geteuid() == 0 {
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 4242 || st.Gid != 4343 {
			t.Errorf("owner %d:%d, want 4242:4343", st.Uid, st.Gid)
		}
	}
	if l, _ := os.Readlink(filepath.Join(dst, "link")); l != "base/1/file" {
		t.Errorf("symlink target %q", l)
	}
}

func TestExtractRefusesEscape(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeLink, Name: "db/x", Linkname: "/etc/passwd"}))
	must(t, tw.Close())
	if err := Extract(&buf, t.TempDir(), 1); err == nil {
		t.Error("a hard link out of the tree was extracted")
	}
}

func TestStripName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		strip int
		want  string
		ok    bool
	}{
		{"db/base/1", 1, "base/1", true},
		{"db/", 1, "", true},
		{"passwd", 0, "passwd", true},
		{"../../etc/passwd", 0, "etc/passwd", true}, // cleaned below dst, never above
		{"a/b", 3, "", false},
	} {
		got, ok := stripName(tc.name, tc.strip)
		if got != tc.want || ok != tc.ok {
			t.Errorf("stripName(%q, %d) = %q %v, want %q %v", tc.name, tc.strip, got, ok, tc.want, tc.ok)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
