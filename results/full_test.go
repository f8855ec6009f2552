package results

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFull: SQLite's own SQLITE_FULL (provoked with max_page_count, as a full disk would) and
// a wrapped ENOSPC are a full disk, named with the file; other errors pass unchanged.
func TestFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (v BLOB)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA max_page_count = 2`); err != nil {
		t.Fatal(err)
	}
	_, full := db.Exec(`INSERT INTO t VALUES (zeroblob(65536))`)
	if full == nil {
		t.Fatal("an insert beyond max_page_count succeeded")
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{full, true},
		{fmt.Errorf("write: %w", &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}), true},
		{errors.New("database is locked"), false},
		{syscall.EIO, false},
	} {
		if got := Full(c.err); got != c.want {
			t.Errorf("Full(%v) = %v, want %v", c.err, got, c.want)
		}
		got := DiskFull(c.err, path)
		if c.want && (!strings.Contains(got.Error(), "disk full writing "+path) || !errors.Is(got, c.err)) {
			t.Errorf("DiskFull(%v) = %v", c.err, got)
		}
		if !c.want && got != c.err {
			t.Errorf("DiskFull(%v) changed it: %v", c.err, got)
		}
	}
}
