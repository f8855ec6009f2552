package results

import (
	"database/sql"
	"errors"
	"slices"
	"strings"
)

// Schema 1 kept what the report decides on as prose in the runs' facts; schema 2 has typed
// columns for them (results/record.go). migrate brings a file of schema 1 to schema 2 in one
// transaction, deriving the columns from the facts as schema 1's writer worded them; a file
// already at schema 2 is left alone. The facts stay as they were.

// readableSchemas are the schema versions Open accepts: this one and those it migrates.
var readableSchemas = []string{"1", SchemaVersion}

// runColumnsV2 are the columns schema 2 added to runs.
var runColumnsV2 = []string{
	`emulated INTEGER NOT NULL DEFAULT 0`,
	`steady_state TEXT NOT NULL DEFAULT ''`,
	`duet_pair TEXT NOT NULL DEFAULT ''`,
	`duet_round INTEGER NOT NULL DEFAULT 0`,
}

// v2Columns derive schema 2's run columns from schema 1's facts, as expressions on a runs
// row: emulated was the fact "emulated" = "true", the steady state the fact steady_state's
// wording (runner/precision.go of schema 1), the duet the fact duet_pair, whose token starts
// with "r<round>-". migrate stores them; a read-only open of a schema 1 file reads them
// through a temporary view (v2View) and changes nothing in the file.
var v2Columns = [][2]string{
	{"emulated", `COALESCE(json_extract(facts, '$.emulated') = 'true', 0)`},
	{"steady_state", `CASE
    WHEN ` + ss + ` LIKE 'off%' THEN 'off'
    WHEN ` + ss + ` LIKE 'not applied: % measured intervals, MSER-% needs %' THEN 'too_short'
    WHEN ` + ss + ` LIKE 'not applied: % measured intervals in batches of %' THEN 'no_minimum'
    WHEN ` + ss + ` LIKE 'MSER-% would cut % intervals, not applied: %' THEN 'cut_failed'
    WHEN ` + ss + ` LIKE 'MSER-%: steady from the start of the window, nothing cut' THEN 'steady'
    WHEN ` + ss + ` LIKE 'MSER-%: the first % of the measured window cut as transient%' THEN 'cut'
    ELSE '' END`},
	{"duet_pair", `COALESCE(json_extract(facts, '$.duet_pair'), '')`},
	{"duet_round", `CASE WHEN json_extract(facts, '$.duet_pair') LIKE 'r%-%'
    THEN CAST(substr(json_extract(facts, '$.duet_pair'), 2, instr(json_extract(facts, '$.duet_pair'), '-') - 2) AS INTEGER)
    ELSE 0 END`},
}

const ss = `COALESCE(json_extract(facts, '$.steady_state'), '')`

// backfillV2 stores v2Columns in the runs of a migrated file.
func backfillV2() string {
	var set []string
	for _, c := range v2Columns {
		set = append(set, c[0]+" = "+c[1])
	}
	return "UPDATE runs SET " + strings.Join(set, ",\n  ")
}

// v2View is the temporary view that shows a schema 1 file's runs as schema 2's: it lives in
// the connection's temp schema (memory), which SQLite searches before main.
func v2View() string {
	var cols []string
	for _, c := range v2Columns {
		cols = append(cols, c[1]+" AS "+c[0])
	}
	return "CREATE TEMP VIEW runs AS SELECT r.*, " + strings.Join(cols, ",\n  ") + " FROM main.runs AS r"
}

// hasV2Columns says whether the runs table has schema 2's columns.
func hasV2Columns(db *sql.DB) (bool, error) {
	rows, err := db.Query(`SELECT name FROM pragma_table_info('runs')`)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return false, err
		}
		if name == "emulated" {
			return true, nil
		}
	}
	return false, rows.Err()
}

func migrate(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	cols, err := columns(tx, "runs")
	if err != nil {
		return err
	}
	if !slices.Contains(cols, "emulated") {
		for _, c := range runColumnsV2 {
			if _, err := tx.Exec(`ALTER TABLE runs ADD COLUMN ` + c); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(backfillV2()); err != nil {
			return err
		}
	}
	var v string
	err = tx.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// Not identified yet: the runner writes the version when it starts the experiment.
	case err != nil:
		return err
	case v != SchemaVersion:
		if _, err := tx.Exec(`UPDATE meta SET value = ? WHERE key = 'schema_version'`, SchemaVersion); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func columns(tx *sql.Tx, table string) ([]string, error) {
	rows, err := tx.Query(`SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}
