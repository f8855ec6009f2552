package ownfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// both runs f with openat2 and with the fallback openat2's absence takes (ENOSYS).
func both(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", f)
	t.Run("fallback", func(t *testing.T) {
		old := openat2
		openat2 = func(int, string, *unix.OpenHow) (int, error) { return -1, unix.ENOSYS }
		defer func() { openat2 = old }()
		f(t)
	})
}

// canary is a file outside the directory under test whose bytes and time must not change.
func canary(t *testing.T) (path string, check func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "canary")
	if err := os.WriteFile(path, []byte("untouched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		b, err := os.ReadFile(path)
		fi, serr := os.Stat(path)
		if err != nil || serr != nil || string(b) != "untouched\n" || !fi.ModTime().Equal(old) {
			t.Errorf("the canary changed: %q %v %v", b, err, serr)
		}
	}
}

func open(t *testing.T, dir string) *Dir {
	t.Helper()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// A link planted at the final name or at the old fixed temporary name is never written
// through; a new name is written whole and no temporary file is left.
func TestWriteAtomic(t *testing.T) {
	both(t, func(t *testing.T) {
		dir := t.TempDir()
		target, check := canary(t)
		d := open(t, dir)
		write := func(f *os.File) error { _, err := f.WriteString("report\n"); return err }
		if err := os.Symlink(target, filepath.Join(dir, "report.html.tmp")); err != nil {
			t.Fatal(err)
		}
		if err := d.WriteAtomic("report.html", 0o644, write); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "report.html")); string(b) != "report\n" {
			t.Errorf("report.html holds %q", b)
		}
		if err := os.Symlink(target, filepath.Join(dir, "linked.html")); err != nil {
			t.Fatal(err)
		}
		err := d.WriteAtomic("linked.html", 0o644, write)
		if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Errorf("a link at the name: %v", err)
		}
		if fi, err := os.Lstat(filepath.Join(dir, "linked.html")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the planted link was replaced: %v", err)
		}
		check()
		names, _ := d.Names()
		if len(names) != 3 {
			t.Errorf("left in the directory: %v", names)
		}
		// A failed write leaves nothing.
		if err := d.WriteAtomic("failed.html", 0o644, func(*os.File) error { return errors.New("full") }); err == nil {
			t.Error("a failing writer's error was lost")
		}
		if names, _ := d.Names(); len(names) != 3 {
			t.Errorf("a failed write left %v", names)
		}
	})
}

// OpenRegular refuses a link, a FIFO (at once), a device and a directory before opening it.
func TestOpenRegularRefuses(t *testing.T) {
	both(t, func(t *testing.T) {
		dir := t.TempDir()
		target, check := canary(t)
		must(t, os.Symlink(target, filepath.Join(dir, "link")))
		must(t, unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
		must(t, os.Mkdir(filepath.Join(dir, "dir"), 0o755))
		kinds := map[string]string{"link": "a symbolic link", "fifo": "a FIFO", "dir": "a directory"}
		if os.Geteuid() == 0 {
			must(t, unix.Mknod(filepath.Join(dir, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
			kinds["null"] = "a character device"
		}
		d := open(t, dir)
		for name, want := range kinds {
			done := make(chan error, 1)
			go func() {
				f, err := d.OpenRegular(name, unix.O_RDWR)
				if f != nil {
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v, want %q", name, err, want)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: OpenRegular did not return", name)
			}
		}
		check()
	})
}

// A missing component that became a link after Resolve looked is refused, and nothing is made
// where it points; a ".." component is refused before anything is made.
func TestOpenRefusesPlantedLink(t *testing.T) {
	both(t, func(t *testing.T) {
		base, elsewhere := t.TempDir(), t.TempDir()
		tg, err := Resolve(filepath.Join(base, "a", "b", "out"))
		if err != nil || len(tg.Missing) != 3 {
			t.Fatalf("resolve: %+v %v", tg, err)
		}
		must(t, os.Symlink(elsewhere, filepath.Join(base, "a")))
		if d, err := tg.Open(0o755); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Errorf("a link planted at a missing component: %v", err)
			if d != nil {
				d.Close()
			}
		}
		if names, _ := os.ReadDir(elsewhere); len(names) != 0 {
			t.Errorf("made through the link: %v", names)
		}
		// Made one at a time, and open.
		d, err := MkdirAll(filepath.Join(base, "x", "y"), 0o755)
		if err != nil {
			t.Fatal(err)
		}
		f, err := d.Create("f", 0o644)
		must(t, err)
		f.Close()
		d.Close()
		if _, err := os.Stat(filepath.Join(base, "x", "y", "f")); err != nil {
			t.Error(err)
		}
		ghost := base + "/g/ghost/../dd" // not filepath.Join: it would clean the ".." away
		if _, err := MkdirAll(ghost, 0o755); err == nil || !strings.Contains(err.Error(), `".." component`) {
			t.Errorf("%s: %v", ghost, err)
		}
		if _, err := os.Lstat(filepath.Join(base, "g")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a/ghost/../dd made something: %v", err)
		}
		// The last component a link: refused by Resolve.
		must(t, os.Symlink(elsewhere, filepath.Join(base, "lnk")))
		if _, err := Resolve(filepath.Join(base, "lnk")); err == nil || !strings.Contains(err.Error(), "is a symbolic link (to "+elsewhere) {
			t.Errorf("a link as the directory: %v", err)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
