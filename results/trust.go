package results

// A results file is read back as untrusted input: it may come from another host, another
// boxbench version or a careless edit, and its experiment id is used in paths under the work
// root (and removed with them). Open checks the file before changing anything in it.

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ErrForeign is wrapped by Open's error for a file that is not a results file this boxbench
// can write to: not SQLite, another program's database, or a newer or unknown schema.
var ErrForeign = errors.New("not a results file this boxbench can use")

var experimentIDRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}-[0-9a-f]{8}$`)

// ValidExperimentID checks an experiment id read back from disk: the experiment name's rule
// (1-63 lower-case letters, digits, '.', '_', '-', starting with a letter or digit) followed by
// '-' and 8 hexadecimal digits, as the runner creates them.
func ValidExperimentID(id string) error {
	if !experimentIDRe.MatchString(id) {
		return fmt.Errorf("experiment id %q is not valid (valid: the experiment name, '-' and 8 hexadecimal digits, e.g. quickstart-1a2b3c4d)", id)
	}
	return nil
}

// ExperimentID returns the stored experiment id ("" when none is stored yet), checked with
// ValidExperimentID.
func (s *Store) ExperimentID() (string, error) {
	return s.Meta("experiment_id")
}

var ourTables = []string{"meta", "cells", "runs", "ops", "intervals", "series", "warnings", "events"}

// checkExisting refuses an existing file at path that is not SQLite, holds tables of another
// program, or was written with another schema version. It only reads (SQLite's read-only mode).
func checkExisting(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if n == 0 {
		return nil // an empty file: SQLite makes it a database
	}
	if !bytes.Equal(head[:n], []byte("SQLite format 3\x00")) {
		return fmt.Errorf("%s: %w: it is not an SQLite database; it was left as it is", path, ErrForeign)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return fmt.Errorf("%s: %w: %v; it was left as it is", path, ErrForeign, err)
	}
	var tables, other []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
		if !slices.Contains(ourTables, t) {
			other = append(other, t)
		}
	}
	rows.Close()
	if len(tables) == 0 {
		return nil
	}
	if !slices.Contains(tables, "meta") || len(other) > 0 {
		return fmt.Errorf("%s: %w: it holds tables boxbench does not write (%s); it was left as it is",
			path, ErrForeign, strings.Join(append(other, missing(tables)...), ", "))
	}
	var v string
	err = db.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // created but not yet identified (a run stopped before it started)
	}
	if err != nil {
		return err
	}
	if slices.Contains(readableSchemas, v) {
		return nil // Open migrates an older one
	}
	have, err1 := strconv.Atoi(v)
	want, _ := strconv.Atoi(SchemaVersion)
	if err1 == nil && have > want {
		return fmt.Errorf("%s: %w: it was written by a newer boxbench (results schema %d; this boxbench reads %s); use that version, it was left as it is", path, ErrForeign, have, strings.Join(readableSchemas, ", "))
	}
	return fmt.Errorf("%s: %w: results schema %q is not one this boxbench reads (valid: %s); it was left as it is", path, ErrForeign, v, strings.Join(readableSchemas, ", "))
}

func missing(tables []string) []string {
	if slices.Contains(tables, "meta") {
		return nil
	}
	return []string{"no meta table"}
}
