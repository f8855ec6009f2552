package results

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// A results.db that is a link, a FIFO, a device or a directory is refused by a reading open
// before it is opened: the link's target is unchanged, the FIFO does not block.
func TestReadOnlyRefusesNotRegular(t *testing.T) {
	target := filepath.Join(t.TempDir(), "target")
	check := testenv.Canary(t, target)
	cases := map[string]func(string) error{
		"a symbolic link": func(p string) error { return os.Symlink(target, p) },
		"a FIFO":          func(p string) error { return unix.Mkfifo(p, 0o644) },
		"a directory":     func(p string) error { return os.Mkdir(p, 0o755) },
	}
	if os.Geteuid() == 0 {
		cases["a character device"] = func(p string) error { return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))) } // /dev/zero
	}
	for want, mk := range cases {
		dir := t.TempDir()
		must(t, mk(filepath.Join(dir, FileName)))
		done := make(chan error, 1)
		go func() {
			s, err := OpenExisting(dir)
			if s != nil {
				s.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), FileName+" is "+want) {
				t.Errorf("%s: %v", want, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: OpenExisting did not return", want)
		}
	}
	check()
}

// fileSums are the names and contents' hashes of the files in dir.
func fileSums(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	for _, n := range dirNames(t, dir) {
		f, err := os.Open(filepath.Join(dir, n))
		must(t, err)
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		must(t, err)
		out = append(out, fmt.Sprintf("%s %x", n, h.Sum(nil)))
	}
	return strings.Join(out, "\n")
}

// evidence makes, in a new directory, the image of a results file whose writer is still open
// (or was killed): results.db, -wal and -shm, the committed run only in -wal.
func evidence(t *testing.T) string {
	t.Helper()
	live := t.TempDir()
	s, err := Open(live)
	must(t, err)
	defer s.Close()
	must(t, s.SetMeta(map[string]string{"experiment_id": "ro-1a2b3c4d", "schema_version": SchemaVersion}))
	now := time.Now()
	must(t, s.PutRun(context.Background(), &RunRecord{ID: "c#1", CellID: "c", Rep: 1, Seq: 1, Status: "ok", Started: now, Ended: now}))
	dir := t.TempDir()
	for _, n := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
		b, err := os.ReadFile(filepath.Join(live, n))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, n), b, 0o444))
	}
	if fi, _ := os.Stat(filepath.Join(dir, FileName+"-wal")); fi == nil || fi.Size() == 0 {
		t.Fatal("no WAL content: the test would not test what immutable misses")
	}
	return dir
}

func runsIn(t *testing.T, dir string) int {
	t.Helper()
	s, err := OpenExisting(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	defer s.Close()
	runs, err := s.Runs()
	must(t, err)
	if _, err := s.db.Exec(`INSERT INTO events VALUES ('t', 'k', 'm')`); err == nil {
		t.Error("a read-only store wrote")
	}
	return len(runs)
}

// A results file in a read-only directory (chmod 0555; and, as root, a read-only bind mount)
// with committed runs in its -wal is read with them, and nothing in the directory changes.
func TestReadOnlyWAL(t *testing.T) {
	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch) // where the private copy goes: empty again after each read
	dir := evidence(t)
	must(t, os.Chmod(dir, 0o555))
	defer os.Chmod(dir, 0o755)
	before := fileSums(t, dir)
	if n := runsIn(t, dir); n != 1 {
		t.Errorf("%d runs read, want the 1 committed in the WAL", n)
	}
	if after := fileSums(t, dir); after != before {
		t.Errorf("the directory changed:\n%s\nwas\n%s", after, before)
	}
	if names := dirNames(t, scratch); len(names) != 0 {
		t.Errorf("the private copy is left: %v", names)
	}
	if os.Geteuid() != 0 {
		return // chmod does not stop root; the bind mount below does
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare for the read-only bind mount")
	}
	// A closed experiment (no -wal: read immutable) beside the live image.
	closed := t.TempDir()
	s, err := Open(closed)
	must(t, err)
	must(t, s.SetMeta(map[string]string{"experiment_id": "ro-1a2b3c4d", "schema_version": SchemaVersion}))
	must(t, s.PutRun(context.Background(), &RunRecord{ID: "c#1", CellID: "c", Rep: 1, Seq: 1, Status: "ok", Started: time.Now(), Ended: time.Now()}))
	s.Close()
	for _, d := range []string{dir, closed} {
		sh := `mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && exec "$2" -test.run '^TestReadOnlyChild$' -test.v`
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", sh, "sh", d, os.Args[0])
		cmd.Env = append(os.Environ(), "BOXBENCH_RO_DIR="+d)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "read-only mount: 1 runs") {
			t.Errorf("%s on a read-only bind mount: %v\n%s", d, err, out)
		}
	}
	if after := fileSums(t, dir); after != before {
		t.Errorf("the directory changed under the read-only mount:\n%s\nwas\n%s", after, before)
	}
}

// TestReadOnlyChild reads BOXBENCH_RO_DIR in TestReadOnlyWAL's read-only mount namespace.
func TestReadOnlyChild(t *testing.T) {
	dir := os.Getenv("BOXBENCH_RO_DIR")
	if dir == "" {
		t.Skip("run by TestReadOnlyWAL")
	}
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o644); !errors.Is(err, unix.EROFS) {
		t.Fatalf("the mount is not read-only: %v", err)
	}
	fmt.Printf("read-only mount: %d runs\n", runsIn(t, dir))
}

// A results file in a directory others can write is read from a private copy: SQLite opens
// nothing there (a FIFO swapped in after the checks could otherwise block its open).
func TestReadOnlyUntrustedDirectory(t *testing.T) {
	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch)
	dir := t.TempDir()
	s, err := Open(dir)
	must(t, err)
	must(t, s.SetMeta(map[string]string{"experiment_id": "ro-1a2b3c4d", "schema_version": SchemaVersion}))
	must(t, s.PutRun(context.Background(), &RunRecord{ID: "c#1", CellID: "c", Rep: 1, Seq: 1, Status: "ok", Started: time.Now(), Ended: time.Now()}))
	s.Close()
	for mode, copied := range map[os.FileMode]bool{0o755: false, 0o777: true} {
		must(t, os.Chmod(dir, mode))
		r, err := OpenExisting(dir)
		must(t, err)
		if (r.copyDir != "") != copied {
			t.Errorf("mode %04o: read from a copy %v, want %v", mode, r.copyDir != "", copied)
		}
		runs, err := r.Runs()
		if err != nil || len(runs) != 1 {
			t.Errorf("mode %04o: %d runs, %v", mode, len(runs), err)
		}
		r.Close()
	}
	if names := dirNames(t, scratch); len(names) != 0 {
		t.Errorf("the private copy is left: %v", names)
	}
}

// A read that needs a private copy refuses one larger than its bound, at once, naming it: a
// sparse results file of 9 GiB (reading as zeros past its header) must not fill the temporary
// directory or take minutes, and no copy is left.
func TestReadOnlyCopyBounded(t *testing.T) {
	scratch := t.TempDir()
	t.Setenv("TMPDIR", scratch)
	dir := t.TempDir()
	s, err := Open(dir)
	must(t, err)
	must(t, s.SetMeta(map[string]string{"experiment_id": "ro-1a2b3c4d", "schema_version": SchemaVersion}))
	s.Close()
	must(t, os.Truncate(filepath.Join(dir, FileName), 9<<30))
	must(t, os.Chmod(dir, 0o777)) // others can write it: read from a copy
	_, err = OpenExisting(dir)
	if !errors.Is(err, ErrBounds) || !strings.Contains(err.Error(), "private copy") {
		t.Errorf("a 9 GiB copy: %v, want the bound", err)
	}
	if names := dirNames(t, scratch); len(names) != 0 {
		t.Errorf("the private copy is left: %v", names)
	}
}
