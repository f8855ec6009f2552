package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// nothingIn fails when dir holds any of boxbench's names.
func nothingIn(t *testing.T, dir string) {
	t.Helper()
	for _, n := range []string{FileName, MarkerName, FileName + "-wal", "report.html"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/%s exists after a refusal (%v)", dir, n, err)
		}
	}
}

// --out /, /etc, a link to /etc, a directory under /usr and under a link to /etc are refused
// before anything is created. The refusal comes before any write, so looking at / and /etc
// afterwards is safe; results.db and the marker were not there before (checked).
func TestClaimRefusesSystemDirectories(t *testing.T) {
	for _, d := range []string{"/", "/etc"} {
		nothingIn(t, d)
	}
	tmp := t.TempDir()
	link := filepath.Join(tmp, "etc-link")
	must(t, os.Symlink("/etc", link))
	parent := filepath.Join(tmp, "to-root")
	must(t, os.Symlink("/", parent))
	for _, tc := range []struct{ out, want string }{
		{"/", "is the system directory /"},
		{"/etc", "is the system directory /etc"},
		{"/etc/", "is the system directory /etc"},
		{link, "is a symbolic link (to /etc)"},
		{filepath.Join(link, "new"), "/etc/new is the system directory /etc"},
		{filepath.Join(parent, "etc"), "is the system directory /etc"},
		{filepath.Join(parent, "tmp"), "is the system directory /tmp"},
		{"/usr/lib/boxbench-out", "is the system directory /usr"},
		{"/proc/sys", "is the system directory /proc"},
		{"/var", "is the system directory /var"},
		{"/tmp", "is the system directory /tmp"},
	} {
		o, err := Claim(tc.out, "exp")
		if err == nil {
			o.Close()
			t.Errorf("--out %s claimed", tc.out)
			continue
		}
		if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--out %s: %v, want %q", tc.out, err, tc.want)
		}
	}
	for _, d := range []string{"/", "/etc", "/usr/lib"} {
		nothingIn(t, d)
	}
	if _, err := os.Lstat("/etc/new"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("/etc/new: %v", err)
	}
}

// a/ghost/../dd is refused, and neither a/ghost nor dd is made.
func TestClaimRefusesDotDot(t *testing.T) {
	base := t.TempDir()
	_, err := Claim(base+"/a/ghost/../dd", "exp")
	if err == nil || !strings.Contains(err.Error(), `has a ".." component`) {
		t.Fatalf("claimed or wrong error: %v", err)
	}
	if names := dirNames(t, base); len(names) != 0 {
		t.Errorf("made %v", names)
	}
}

// A directory holding another program's files is refused naming them, and nothing in it is
// changed; one holding an older boxbench's results file (no marker) is adopted.
func TestClaimForeignAndOlder(t *testing.T) {
	foreign := t.TempDir()
	check := testenv.Canary(t, filepath.Join(foreign, "report.html"))
	_, err := Claim(foreign, "exp")
	if err == nil || !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), "holds files boxbench did not write (report.html)") {
		t.Errorf("foreign directory: %v", err)
	}
	check()
	if names := dirNames(t, foreign); len(names) != 1 {
		t.Errorf("foreign directory now holds %v", names)
	}

	// Another program's SQLite file named results.db is not boxbench's either.
	other := t.TempDir()
	sqliteExec(t, filepath.Join(other, FileName), `CREATE TABLE users (name TEXT)`)
	if _, err := Claim(other, "exp"); err == nil || !strings.Contains(err.Error(), "tables boxbench does not write") {
		t.Errorf("another program's results.db: %v", err)
	}

	older := t.TempDir()
	s, err := Open(older) // what an older boxbench left: results.db and its report, no marker
	must(t, err)
	must(t, s.SetMeta(map[string]string{"experiment_id": "exp-1a2b3c4d", "schema_version": SchemaVersion}))
	s.Close()
	must(t, os.WriteFile(filepath.Join(older, "report.html"), []byte("<html>"), 0o644))
	o, err := Claim(older, "exp")
	if err != nil {
		t.Fatalf("an older boxbench's directory: %v", err)
	}
	must(t, o.Note("exp-1a2b3c4d"))
	o.Close()
	if b, err := os.ReadFile(filepath.Join(older, MarkerName)); err != nil || !strings.Contains(string(b), `"experiment_id": "exp-1a2b3c4d"`) {
		t.Errorf("marker %s, %v", b, err)
	}
	// Marked now: whatever else is put there later, it stays boxbench's.
	must(t, os.WriteFile(filepath.Join(older, "notes.txt"), nil, 0o644))
	o, err = Claim(older, "exp")
	must(t, err)
	o.Close()

	// A directory others can write in is refused (they could plant a link between check and open).
	open := t.TempDir()
	must(t, os.Chmod(open, 0o777))
	if _, err := Claim(open, "exp"); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("a world-writable directory: %v", err)
	}
	nothingIn(t, open)
}

// One experiment at a time holds a directory: a second claim is refused, naming this
// process, and changes nothing; once the first is released the directory can be claimed.
func TestClaimInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "out")
	first, err := Claim(dir, "exp")
	must(t, err)
	marker, _ := os.ReadFile(filepath.Join(dir, MarkerName))
	_, err = Claim(dir, "other")
	if err == nil || !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("second claim: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, MarkerName)); string(b) != string(marker) {
		t.Errorf("the refused claim rewrote the marker: %s", b)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v", names)
	}
	first.Close()
	again, err := Claim(dir, "other")
	must(t, err)
	again.Close()
}

// A results.db that is a link is never opened by a claim or by a writer: the file it points
// to is unchanged.
func TestClaimResultsLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "target")
	check := testenv.Canary(t, target)
	must(t, os.Symlink(target, filepath.Join(dir, FileName)))
	if _, err := Claim(dir, "exp"); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("claim: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("open: %v", err)
	}
	must(t, os.Symlink(target, filepath.Join(dir, FileName+"-wal")))
	must(t, os.Remove(filepath.Join(dir, FileName)))
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), FileName+"-wal is a symbolic link") {
		t.Errorf("open with a linked -wal: %v", err)
	}
	check()
}
