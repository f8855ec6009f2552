// Package results stores an experiment in one SQLite file (DIR/results.db): the spec, every
// cell, every run with its measurements, time series, environment and warnings. A run is
// written in one transaction, so a run is either wholly stored or absent; that is what makes
// an interrupted experiment resumable. docs/results.md documents the schema and units.
package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite": embedded, no cgo

	"github.com/boxbench/boxbench/internal/ownfs"
	"github.com/boxbench/boxbench/workload"
)

// SchemaVersion changes when the schema does; docs/results.md lists the versions.
const SchemaVersion = "3"

// FileName is the results file inside an experiment directory.
const FileName = "results.db"

const schema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
  id TEXT PRIMARY KEY, params TEXT NOT NULL, skipped_reason TEXT, baseline_id TEXT);
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, cell_id TEXT NOT NULL, rep INTEGER NOT NULL, seq INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok','failed')), reason TEXT NOT NULL DEFAULT '',
  log_tail TEXT NOT NULL DEFAULT '', started_at TEXT NOT NULL, ended_at TEXT NOT NULL,
  throughput_ops_per_second REAL, result TEXT, env TEXT, limits_requested TEXT,
  limits_applied TEXT, facts TEXT, emulated INTEGER NOT NULL DEFAULT 0,
  steady_state TEXT NOT NULL DEFAULT '', duet_pair TEXT NOT NULL DEFAULT '',
  duet_round INTEGER NOT NULL DEFAULT 0, orchestrator TEXT);
CREATE TABLE IF NOT EXISTS ops (
  run_id TEXT NOT NULL, op TEXT NOT NULL, series TEXT NOT NULL, count INTEGER NOT NULL,
  errors INTEGER NOT NULL, ops_per_second REAL NOT NULL, p50_ns INTEGER, p90_ns INTEGER,
  p95_ns INTEGER, p99_ns INTEGER, p999_ns INTEGER, max_ns INTEGER, mean_ns REAL, hist BLOB,
  PRIMARY KEY (run_id, op, series));
CREATE TABLE IF NOT EXISTS intervals (
  run_id TEXT NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, phase TEXT NOT NULL,
  op TEXT NOT NULL, series TEXT NOT NULL, count INTEGER NOT NULL, errors INTEGER NOT NULL, hist BLOB);
CREATE INDEX IF NOT EXISTS intervals_run ON intervals (run_id);
CREATE TABLE IF NOT EXISTS series (
  run_id TEXT NOT NULL, source TEXT NOT NULL, metric TEXT NOT NULL, label TEXT NOT NULL DEFAULT '',
  t_ns INTEGER NOT NULL, value REAL NOT NULL);
CREATE INDEX IF NOT EXISTS series_run ON series (run_id);
CREATE TABLE IF NOT EXISTS warnings (
  run_id TEXT NOT NULL, code TEXT NOT NULL, severity TEXT NOT NULL, message TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  t TEXT NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL);
`

// Store is an open results file. Methods are safe for use by one goroutine at a time.
type Store struct {
	db   *sql.DB
	path string
	// dir is closed with the store when Open made it (OpenIn's belongs to its caller).
	dir *ownfs.Dir
	// copyDir, when not "", is the private copy a read-only open reads (openCopy), removed
	// on Close.
	copyDir string
}

// Open opens (creating if needed) DIR/results.db for writing, making DIR and its missing
// parents without following a link (ownfs.MkdirAll). An existing file that is not a results
// file of this schema version is refused (ErrForeign) before anything in it changes. A run
// opens its claimed directory with OpenIn instead.
func Open(dir string) (*Store, error) {
	d, err := ownfs.MkdirAll(dir, 0o755)
	if err != nil {
		return nil, err
	}
	s, err := OpenIn(d)
	if err != nil {
		d.Close()
		return nil, err
	}
	s.dir = d
	return s, nil
}

// OpenExisting opens the results file in dir read-only, for reading commands: nothing in the
// file or beside it is changed (OpenReadOnly).
func OpenExisting(dir string) (*Store, error) { return OpenReadOnly(dir) }

// Close closes the file.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.dir != nil {
		s.dir.Close()
	}
	if s.copyDir != "" {
		os.RemoveAll(s.copyDir)
	}
	return err
}

// Path is the results file's path.
func (s *Store) Path() string { return s.path }

// Meta returns a stored experiment attribute ("" when absent). The experiment id is checked
// with ValidExperimentID: it is read back from a file and used in paths.
func (s *Store) Meta(key string) (string, error) {
	var v string
	err := s.db.QueryRow(`SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err == nil && key == "experiment_id" {
		// The id names directories under the work root that are removed with it.
		if err := ValidExperimentID(v); err != nil {
			return "", fmt.Errorf("%s: %w", s.path, err)
		}
	}
	return v, err
}

// SetMeta stores experiment attributes.
func (s *Store) SetMeta(kv map[string]string) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	for k, v := range kv {
		if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// CellRecord is one stored cell.
type CellRecord struct {
	ID            string            `json:"id"`
	Params        map[string]string `json:"params"`
	SkippedReason string            `json:"skipped_reason,omitempty"`
	BaselineID    string            `json:"baseline_id,omitempty"`
}

// PutCells stores the plan's cells (replacing earlier records of the same ids).
func (s *Store) PutCells(cells []CellRecord) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	for _, c := range cells {
		p, _ := json.Marshal(c.Params)
		if _, err := tx.Exec(`INSERT INTO cells (id, params, skipped_reason, baseline_id) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET params = excluded.params, skipped_reason = excluded.skipped_reason, baseline_id = excluded.baseline_id`,
			c.ID, string(p), nullIfEmpty(c.SkippedReason), nullIfEmpty(c.BaselineID)); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// Event records something that happened to the experiment (a resume, an adaptive decision).
func (s *Store) Event(kind, message string) error {
	_, err := s.db.Exec(`INSERT INTO events (t, kind, message) VALUES (?, ?, ?)`, time.Now().UTC().Format(time.RFC3339Nano), kind, message)
	return err
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Point is one telemetry sample.
type Point struct {
	T      time.Duration // offset from the run's clock origin (end of the sampled interval)
	Source string        // "db", "client", "host", or a neighbour's name
	Metric string        // name with unit (see docs/results.md)
	Label  string        // device or interface the metric is about, or ""
	Value  float64
}

// Warning is a validity check that failed for a run.
type Warning struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// RunRecord is everything stored for one run.
type RunRecord struct {
	ID, CellID      string
	Rep, Seq        int
	Status          string // "ok" or "failed"
	Reason, LogTail string
	Started, Ended  time.Time
	Result          *workload.Result
	Env             map[string]string
	LimitsRequested any
	LimitsApplied   any
	// Facts describe the run for people (docs/results.md); nothing decides on them.
	Facts map[string]string
	// Emulated says the box was a VM whose CPU QEMU emulated (TCG): its numbers are the
	// emulator's.
	Emulated bool
	Steady   Steady
	Duet     Duet
	// Orchestrator is what the box recorded of the orchestrator it ran on; its facts are
	// among Facts too.
	Orchestrator Orchestrator
	// ClientCPUs are the cpus of this host the run's client was pinned to (placement.client's,
	// or its site's), "" when it was not pinned. Stored as the env's client_cpus, where every
	// schema keeps it (RunRow.ClientCPUs reads it back); an Env that already holds the key
	// keeps it when ClientCPUs is "".
	ClientCPUs string
	Series     []Point
	Warnings   []Warning
}

// storedEnv is the env column: Env with ClientCPUs as client_cpus (Env itself is not changed).
func (r *RunRecord) storedEnv() map[string]string {
	if r.ClientCPUs == "" {
		return r.Env
	}
	env := maps.Clone(r.Env)
	if env == nil {
		env = map[string]string{}
	}
	env["client_cpus"] = r.ClientCPUs
	return env
}

// PutRun stores a run atomically, replacing an earlier record with the same id.
func (s *Store) PutRun(ctx context.Context, r *RunRecord) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range []string{"ops", "intervals", "series", "warnings"} {
		if _, err := tx.Exec(`DELETE FROM `+t+` WHERE run_id = ?`, r.ID); err != nil {
			return err
		}
	}
	var thr any
	if r.Result != nil {
		thr = TotalThroughput(r.Result)
	}
	_, err = tx.Exec(`INSERT OR REPLACE INTO runs (id, cell_id, rep, seq, status, reason, log_tail, started_at, ended_at,
		throughput_ops_per_second, result, env, limits_requested, limits_applied, facts,
		emulated, steady_state, duet_pair, duet_round, orchestrator)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.CellID, r.Rep, r.Seq, r.Status, r.Reason, r.LogTail,
		r.Started.UTC().Format(time.RFC3339Nano), r.Ended.UTC().Format(time.RFC3339Nano), thr,
		jsonOrNil(r.Result), jsonOrNil(r.storedEnv()), jsonOrNil(r.LimitsRequested), jsonOrNil(r.LimitsApplied), jsonOrNil(r.Facts),
		r.Emulated, string(r.Steady), r.Duet.Pair, r.Duet.Round, storedOrchestrator(r.Orchestrator))
	if err != nil {
		return fmt.Errorf("store run %s: %w", r.ID, err)
	}
	if r.Result != nil {
		for _, o := range r.Result.Ops {
			if _, err := tx.Exec(`INSERT INTO ops VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.ID, o.Op, o.Series, o.Count, o.Errors, o.Throughput, o.P50, o.P90, o.P95, o.P99, o.P999, o.Max, o.Mean, o.Hist); err != nil {
				return err
			}
		}
		for _, iv := range r.Result.Intervals {
			if _, err := tx.Exec(`INSERT INTO intervals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.ID, int64(iv.Start), int64(iv.End), string(iv.Phase), iv.Op, iv.Series, iv.Count, iv.Errors, iv.Hist); err != nil {
				return err
			}
		}
	}
	for _, p := range r.Series {
		if _, err := tx.Exec(`INSERT INTO series VALUES (?, ?, ?, ?, ?, ?)`, r.ID, p.Source, p.Metric, p.Label, int64(p.T), p.Value); err != nil {
			return err
		}
	}
	for _, w := range r.Warnings {
		if _, err := tx.Exec(`INSERT INTO warnings VALUES (?, ?, ?, ?)`, r.ID, w.Code, w.Severity, w.Message); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// storedOrchestrator is the orchestrator column: its JSON, "{}" for a run on none (NULL is a
// run written before schema 3, whose facts say it: legacyOrchestrator).
func storedOrchestrator(o Orchestrator) string {
	b, _ := json.Marshal(o) // strings only: it cannot fail
	return string(b)
}

func jsonOrNil(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return string(b)
}

// TotalThroughput is the headline figure of a run (workload.Result.Throughput).
func TotalThroughput(r *workload.Result) float64 { return r.Throughput() }
