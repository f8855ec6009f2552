package safefile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRefuses: a device, a FIFO with no writer, a symbolic link to either, a directory, an
// oversized file, a file of another user and a group-writable one are refused at once, each
// with a message saying what it is; a regular file of the user's own is read.
func TestRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name string, size int, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", 100, 0o600)
	big := write("big", 2048, 0o600)
	gw := write("groupwritable", 10, 0o620)
	other := write("other", 10, 0o600)
	if err := os.Chown(other, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "fifolink")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	strict := Rule{Max: 1024, NoFollow: true, Owners: InvokingUsers()}
	for _, c := range []struct {
		path string
		rule Rule
		want string
	}{
		{"/dev/zero", strict, "character device"},
		{"/dev/zero", Rule{Max: 1024}, "character device"},
		{fifo, strict, "FIFO"},
		{fifo, Rule{Max: 1024}, "FIFO"},
		{link, strict, "symbolic link"},
		{link, Rule{Max: 1024}, "character device"},
		{fifoLink, Rule{Max: 1024}, "FIFO"},
		{dir, strict, "directory"},
		{big, strict, "larger than the 1024"},
		{gw, strict, "writable by group or others"},
		{other, strict, "owned by uid 65534"},
		{filepath.Join(dir, "absent"), strict, "no such file"},
	} {
		start := time.Now()
		_, err := Read(c.path, c.rule)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error with %q, got %v", c.path, c.want, err)
		}
		if d := time.Since(start); d > 10*time.Second { // a hang, not a timing assert
			t.Errorf("%s took %s", c.path, d)
		}
	}
	if data, err := Read(good, strict); err != nil || len(data) != 100 {
		t.Errorf("good file: %d bytes, %v", len(data), err)
	}
	if _, err := Read(gw, Rule{Max: 1024}); err != nil {
		t.Errorf("without owners the mode is not checked: %v", err)
	}
}

// TestDirectoryOfAnother: a file of the user's own in a directory another user can change is
// refused (that user could replace it between runs).
func TestDirectoryOfAnother(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := Read(p, Rule{Max: 10, Owners: InvokingUsers()})
	if err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("want the directory refused, got %v", err)
	}
}
