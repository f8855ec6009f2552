package results

import (
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// Schema 1 kept what the report decides on as prose in the runs' facts; schema 2 has typed
// columns for them (results/record.go). Schema 3 adds the orchestrator a run's box recorded
// (Orchestrator), which earlier runs kept only as facts. migrate brings a file of schema 1 or
// 2 to schema 3 in one transaction, deriving schema 2's columns from the facts as schema 1's
// writer worded them and leaving the orchestrator of the earlier runs NULL, which reading
// translates from their facts (legacyOrchestrator); a file already at schema 3 is left
// alone. The facts stay as they were.

// readableSchemas are the schema versions Open accepts: this one and those it migrates.
var readableSchemas = []string{"1", "2", SchemaVersion}

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
// through a temporary view (oldRunsView) and changes nothing in the file.
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

// oldRunsView is the temporary view that shows the runs of a file of schema 1 or 2 (whose
// runs table has the columns have) as schema 3's: schema 2's columns derived (v2Columns), the
// orchestrator NULL (read from the facts, legacyOrchestrator). It lives in the connection's
// temp schema (memory), which SQLite searches before main; "" when nothing is missing.
func oldRunsView(have []string) string {
	var cols []string
	if !slices.Contains(have, "emulated") {
		for _, c := range v2Columns {
			cols = append(cols, c[1]+" AS "+c[0])
		}
	}
	if !slices.Contains(have, "orchestrator") {
		cols = append(cols, "NULL AS orchestrator")
	}
	if len(cols) == 0 {
		return ""
	}
	return "CREATE TEMP VIEW runs AS SELECT r.*, " + strings.Join(cols, ",\n  ") + " FROM main.runs AS r"
}

// legacyOrchestrator is what a run written before schema 3 recorded of its orchestrator:
// only a Kubernetes box recorded one, as these facts (platform/kubernetes, docs/kubernetes.md),
// which the report showed in this order with these labels. A run with none of them has none.
func legacyOrchestrator(facts map[string]string) Orchestrator {
	keys := []struct{ key, label string }{
		{"kubernetes_cluster", "cluster"},
		{"kubernetes_cni", "CNI"},
		{"kubernetes_kube_proxy_mode", "kube-proxy"},
		{"kubernetes_version", "Kubernetes"},
		{"kubernetes_nodes", "nodes"},
	}
	o := Orchestrator{Name: "Kubernetes"}
	found := false
	for _, k := range keys {
		v := facts[k.key]
		found = found || v != ""
		o.Facts = append(o.Facts, OrchestratorFact{Key: k.key, Label: k.label, Value: v})
	}
	if !found {
		return Orchestrator{}
	}
	return o
}

// readOrchestrator is a run's orchestrator from its column (cut like the facts), or from its
// facts when the column is NULL (a run written before schema 3). A column that is not an
// Orchestrator's JSON reads as none.
func readOrchestrator(col sql.NullString, facts map[string]string) Orchestrator {
	if !col.Valid {
		return legacyOrchestrator(facts)
	}
	var o Orchestrator
	if json.Unmarshal([]byte(col.String), &o) != nil {
		return Orchestrator{}
	}
	o.Name = cut(o.Name, MaxName)
	for i, f := range o.Facts {
		o.Facts[i] = OrchestratorFact{Key: cut(f.Key, MaxName), Label: cut(f.Label, MaxName), Value: cut(f.Value, MaxText)}
	}
	return o
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
	if !slices.Contains(cols, "orchestrator") {
		// NULL in every earlier run: read from its facts (legacyOrchestrator).
		if _, err := tx.Exec(`ALTER TABLE runs ADD COLUMN orchestrator TEXT`); err != nil {
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

// columns are the names of table's columns, read in a transaction or on the store's connection.
func columns(q interface {
	Query(string, ...any) (*sql.Rows, error)
}, table string) ([]string, error) {
	rows, err := q.Query(`SELECT name FROM pragma_table_info(?)`, table)
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
