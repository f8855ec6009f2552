package results

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidExperimentID(t *testing.T) {
	for _, ok := range []string{"quickstart-1a2b3c4d", "a-00000000", "storage-path.v2-deadbeef"} {
		if err := ValidExperimentID(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "x-1", "../../etc-1a2b3c4d", "/tmp/x-1a2b3c4d", "-rf-1a2b3c4d", "a-1A2B3C4D",
		"a-1a2b3c4d/..", "a\n-1a2b3c4d", "seeds", "locks", "..-1a2b3c4d"} {
		if err := ValidExperimentID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestHostileExperimentID: an id edited into results.db is never returned.
func TestHostileExperimentID(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetMeta(map[string]string{"experiment_id": "../../../../etc"}); err != nil {
		t.Fatal(err)
	}
	for name, get := range map[string]func() (string, error){
		"Meta":         func() (string, error) { return s.Meta("experiment_id") },
		"ExperimentID": s.ExperimentID,
	} {
		if id, err := get(); err == nil || id != "" || !strings.Contains(err.Error(), "is not valid") {
			t.Errorf("%s: %q, %v", name, id, err)
		}
	}
}

// TestOpenRefusesForeign: a file that is not ours, or is newer, is refused and left byte for
// byte as it was.
func TestOpenRefusesForeign(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(path string)
		want string
	}{
		{"not sqlite", func(p string) { must(t, os.WriteFile(p, []byte("#!/bin/sh\nrm -rf /\n"), 0o644)) }, "not an SQLite database"},
		{"another program's database", func(p string) { sqliteExec(t, p, `CREATE TABLE users (name TEXT)`) }, "tables boxbench does not write (users, no meta table)"},
		{"newer schema", func(p string) {
			sqliteExec(t, p, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('schema_version', '7')`)
		}, "written by a newer boxbench (results schema 7; this boxbench reads 1, 2, 3)"},
		{"unknown schema", func(p string) {
			sqliteExec(t, p, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('schema_version', 'x')`)
		}, `results schema "x" is not one this boxbench reads`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			tc.make(path)
			before, _ := os.ReadFile(path)
			entries, _ := os.ReadDir(dir)
			s, err := Open(dir)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "left as it is") {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Error("the file was modified")
			}
			if e2, _ := os.ReadDir(dir); len(e2) != len(entries) {
				t.Errorf("files appeared next to it: %v", e2)
			}
		})
	}
	// Our own file, created and reopened, is accepted.
	dir := t.TempDir()
	s, err := Open(dir)
	must(t, err)
	must(t, s.SetMeta(map[string]string{"schema_version": SchemaVersion}))
	s.Close()
	s, err = Open(dir)
	must(t, err)
	s.Close()
}

func sqliteExec(t *testing.T, path, q string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	must(t, err)
	defer db.Close()
	_, err = db.Exec(q)
	must(t, err)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
