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

// sqliteHeader is how every SQLite database file begins.
var sqliteHeader = []byte("SQLite format 3\x00")

// checkHeader reads the start of the verified results file f: empty is true for an empty
// file (SQLite makes it a database); a file that is not SQLite is refused.
func checkHeader(f *os.File) (empty bool, err error) {
	head := make([]byte, len(sqliteHeader))
	n, err := f.ReadAt(head, 0)
	if n == 0 && (err == nil || errors.Is(err, io.EOF)) {
		return true, nil
	}
	if !bytes.Equal(head[:n], sqliteHeader) {
		return false, fmt.Errorf("%s: %w: it is not an SQLite database; it was left as it is", f.Name(), ErrForeign)
	}
	return false, nil
}

// checkSchema refuses a database that holds tables of another program or was written with
// a schema version this boxbench does not read; it returns the version ("" when none is
// stored yet: created, not yet identified). It only reads.
func checkSchema(db *sql.DB, path string) (string, error) {
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return "", fmt.Errorf("%s: %w: %v; it was left as it is", path, ErrForeign, err)
	}
	var tables, other []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return "", err
		}
		tables = append(tables, t)
		if !slices.Contains(ourTables, t) {
			other = append(other, t)
		}
	}
	rows.Close()
	if len(tables) == 0 {
		return "", nil
	}
	if !slices.Contains(tables, "meta") || len(other) > 0 {
		return "", fmt.Errorf("%s: %w: it holds tables boxbench does not write (%s); it was left as it is",
			path, ErrForeign, strings.Join(append(other, missing(tables)...), ", "))
	}
	var v string
	err = db.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil // created but not yet identified (a run stopped before it started)
	}
	if err != nil {
		return "", err
	}
	if slices.Contains(readableSchemas, v) {
		return v, nil // Open migrates an older one; a read-only open reads it as it is
	}
	have, err1 := strconv.Atoi(v)
	want, _ := strconv.Atoi(SchemaVersion)
	if err1 == nil && have > want {
		return "", fmt.Errorf("%s: %w: it was written by a newer boxbench (results schema %d; this boxbench reads %s); use that version, it was left as it is", path, ErrForeign, have, strings.Join(readableSchemas, ", "))
	}
	return "", fmt.Errorf("%s: %w: results schema %q is not one this boxbench reads (valid: %s); it was left as it is", path, ErrForeign, v, strings.Join(readableSchemas, ", "))
}

func missing(tables []string) []string {
	if slices.Contains(tables, "meta") {
		return nil
	}
	return []string{"no meta table"}
}
