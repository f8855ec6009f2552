package results

import (
	"database/sql"
	"encoding/json"
	"errors"
	"github.com/boxbench/boxbench/workload"
	"math"
	"time"
)

// RunRow is a stored run as listings show it.
type RunRow struct {
	ID         string             `json:"id"`
	CellID     string             `json:"cell"`
	Rep        int                `json:"rep"`
	Seq        int                `json:"seq"`
	Status     string             `json:"status"`
	Reason     string             `json:"reason,omitempty"`
	LogTail    string             `json:"log_tail,omitempty"`
	Started    time.Time          `json:"started_at"`
	Ended      time.Time          `json:"ended_at"`
	Throughput *float64           `json:"throughput_ops_per_second,omitempty"`
	Ops        []OpRow            `json:"ops,omitempty"`
	Warnings   []Warning          `json:"warnings,omitempty"`
	Env        map[string]string  `json:"env,omitempty"`
	Facts      map[string]string  `json:"facts,omitempty"`
	Limits     map[string]any     `json:"limits_applied,omitempty"`
	Result     json.RawMessage    `json:"result,omitempty"`
	Extra      map[string]float64 `json:"-"`
	// The typed values of RunRecord (results/record.go). Left out of the listing's JSON, which
	// shows them as the facts that explain them.
	Emulated bool   `json:"-"`
	Steady   Steady `json:"-"`
	Duet     Duet   `json:"-"`
	// Orchestrator is what the box recorded of its orchestrator (RunRecord's), read from the
	// facts of a run written before schema 3 (legacyOrchestrator).
	Orchestrator Orchestrator `json:"-"`
	// ClientCPUs are the CPUs the run's client was pinned to (placement.client's, or its
	// site's), "" when it was not: the env's client_cpus, where every schema keeps it.
	ClientCPUs string `json:"-"`
}

// OpRow is one op type of one run as stored: the workload's own summary (latencies in ns),
// histogram included.
type OpRow = workload.OpSummary

// Runs lists stored runs in run order, with their op summaries and warnings.
func (s *Store) Runs() ([]RunRow, error) {
	// Bounds (results/bounds.go): counts before rows are read, figures as they are.
	if err := s.count("runs", "runs", "", MaxRuns); err != nil {
		return nil, err
	}
	if err := s.count("op summaries", "ops", "", MaxRuns*64); err != nil {
		return nil, err
	}
	if err := s.bytes("op histograms", "ops", "hist", "", MaxOpsHistBytes); err != nil {
		return nil, err
	}
	if err := s.count("operation types", "(SELECT DISTINCT op FROM ops)", "", MaxOpTypes); err != nil {
		return nil, err
	}
	if err := s.count("warnings", "warnings", "", MaxWarnings); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(`SELECT id, cell_id, rep, seq, status, reason, log_tail, started_at, ended_at,
		throughput_ops_per_second, COALESCE(env, '{}'), COALESCE(facts, '{}'), COALESCE(limits_applied, '{}'), COALESCE(result, 'null'),
		emulated, steady_state, duet_pair, duet_round, orchestrator
		FROM runs ORDER BY seq, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RunRow
	idx := map[string]int{}
	for rows.Next() {
		var r RunRow
		var st, en, env, facts, lim, res string
		var thr sql.NullFloat64
		var orch sql.NullString
		if err := rows.Scan(&r.ID, &r.CellID, &r.Rep, &r.Seq, &r.Status, &r.Reason, &r.LogTail, &st, &en, &thr, &env, &facts, &lim, &res,
			&r.Emulated, &r.Steady, &r.Duet.Pair, &r.Duet.Round, &orch); err != nil {
			return nil, err
		}
		r.Started, _ = time.Parse(time.RFC3339Nano, st)
		r.Ended, _ = time.Parse(time.RFC3339Nano, en)
		r.ID, r.CellID, r.Status, r.Steady = cut(r.ID, MaxName), cut(r.CellID, MaxName), cut(r.Status, MaxName), Steady(cut(string(r.Steady), MaxName))
		r.Duet.Pair, r.Reason, r.LogTail = cut(r.Duet.Pair, MaxName), cut(r.Reason, MaxText), cut(r.LogTail, MaxText)
		if thr.Valid {
			v := thr.Float64
			if err := checkFigure(s.path+": run "+r.ID, "throughput_ops_per_second", v); err != nil {
				return nil, err
			}
			r.Throughput = &v
		}
		_ = json.Unmarshal([]byte(env), &r.Env)
		r.Env = cutMap(r.Env)
		r.ClientCPUs = r.Env["client_cpus"]
		_ = json.Unmarshal([]byte(facts), &r.Facts)
		r.Facts = cutMap(r.Facts)
		r.Orchestrator = readOrchestrator(orch, r.Facts)
		_ = json.Unmarshal([]byte(lim), &r.Limits)
		if res != "null" {
			if err := checkResultJSON(s.path+": run "+r.ID, []byte(res)); err != nil {
				return nil, err
			}
			r.Result = json.RawMessage(res)
		}
		idx[r.ID] = len(out)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ops, err := s.db.Query(`SELECT run_id, op, series, count, errors, ops_per_second, p50_ns, p90_ns, p95_ns, p99_ns, p999_ns, max_ns, mean_ns, hist FROM ops ORDER BY run_id, op, series`)
	if err != nil {
		return nil, err
	}
	defer ops.Close()
	for ops.Next() {
		var id string
		var o OpRow
		if err := ops.Scan(&id, &o.Op, &o.Series, &o.Count, &o.Errors, &o.Throughput, &o.P50, &o.P90, &o.P95, &o.P99, &o.P999, &o.Max, &o.Mean, &o.Hist); err != nil {
			return nil, err
		}
		where := s.path + ": run " + cut(id, MaxName) + " op " + cut(o.Op, MaxName)
		if err := errors.Join(checkFigure(where, "ops_per_second", o.Throughput), checkFigure(where, "mean_ns", o.Mean)); err != nil {
			return nil, err
		}
		o.Op, o.Series = cut(o.Op, MaxName), cut(o.Series, MaxName)
		if len(o.Hist) > 0 && !histOK(o.Hist) {
			o.Hist = nil // read as unreadable, which the report says
		}
		if i, ok := idx[cut(id, MaxName)]; ok {
			out[i].Ops = append(out[i].Ops, o)
		}
	}
	ws, err := s.db.Query(`SELECT run_id, code, severity, message FROM warnings ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	for ws.Next() {
		var id string
		var w Warning
		if err := ws.Scan(&id, &w.Code, &w.Severity, &w.Message); err != nil {
			return nil, err
		}
		w.Code, w.Severity, w.Message = cut(w.Code, MaxName), cut(w.Severity, MaxName), cut(w.Message, MaxText)
		if i, ok := idx[cut(id, MaxName)]; ok {
			out[i].Warnings = append(out[i].Warnings, w)
		}
	}
	return out, ws.Err()
}

// Done returns the ids of runs that have a stored result (ok or failed).
func (s *Store) Done() (map[string]bool, error) {
	rows, err := s.db.Query(`SELECT id FROM runs`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	done := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		done[id] = true
	}
	return done, rows.Err()
}

// Cells lists stored cells in id order.
func (s *Store) Cells() ([]CellRecord, error) {
	if err := s.count("cells", "cells", "", MaxCells); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(`SELECT id, params, COALESCE(skipped_reason, ''), COALESCE(baseline_id, '') FROM cells ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CellRecord
	keys := map[string]bool{} // the matrix keys of every cell: each is a column of the tables
	for rows.Next() {
		var c CellRecord
		var p string
		if err := rows.Scan(&c.ID, &p, &c.SkippedReason, &c.BaselineID); err != nil {
			return nil, err
		}
		_ = json.Unmarshal([]byte(p), &c.Params)
		c.ID, c.BaselineID, c.SkippedReason, c.Params = cut(c.ID, MaxName), cut(c.BaselineID, MaxName), cut(c.SkippedReason, MaxText), cutMap(c.Params)
		for k := range c.Params {
			keys[k] = true
		}
		if len(keys) > MaxParamKeys {
			return nil, boundsError("%s holds cells of more than %d matrix keys (valid: at most %d)", s.path, MaxParamKeys, MaxParamKeys)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Series returns a run's telemetry points ordered by source, metric and time.
//
// A point whose value is not finite or beyond MaxFigure is left out: it shows as a gap, as a
// sample that was not taken does (results/bounds.go).
func (s *Store) Series(runID string) ([]Point, error) {
	if err := s.count("telemetry samples for run "+cut(runID, MaxName), "series", "run_id = ?", MaxPointsPerRun, runID); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(`SELECT source, metric, label, t_ns, value FROM series WHERE run_id = ? ORDER BY source, metric, label, t_ns`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Point
	names := map[string]string{} // a run's samples share a few dozen names: keep one copy each
	intern := func(s string) string {
		if v, ok := names[s]; ok {
			return v
		}
		names[s] = s
		return s
	}
	for rows.Next() {
		var p Point
		var t int64
		if err := rows.Scan(&p.Source, &p.Metric, &p.Label, &t, &p.Value); err != nil {
			return nil, err
		}
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) || math.Abs(p.Value) > MaxFigure {
			continue
		}
		p.Source, p.Metric, p.Label = intern(cut(p.Source, MaxName)), intern(cut(p.Metric, MaxName)), intern(cut(p.Label, MaxName))
		p.T = time.Duration(t)
		out = append(out, p)
	}
	return out, rows.Err()
}

// IntervalRow is one stored interval (latency histogram encoded).
type IntervalRow struct {
	Start, End time.Duration
	Phase      string
	Op, Series string
	Count      int64
	Errors     int64
	Hist       []byte
}

// Intervals returns a run's interval histograms in time order.
func (s *Store) Intervals(runID string) ([]IntervalRow, error) {
	if err := s.count("intervals for run "+cut(runID, MaxName), "intervals", "run_id = ?", MaxIntervalsPerRun, runID); err != nil {
		return nil, err
	}
	if err := s.bytes("interval histograms for run "+cut(runID, MaxName), "intervals", "hist", "run_id = ?", MaxRunHistBytes, runID); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(`SELECT start_ns, end_ns, phase, op, series, count, errors, hist FROM intervals WHERE run_id = ? ORDER BY start_ns, op, series`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []IntervalRow
	for rows.Next() {
		var r IntervalRow
		var st, en int64
		if err := rows.Scan(&st, &en, &r.Phase, &r.Op, &r.Series, &r.Count, &r.Errors, &r.Hist); err != nil {
			return nil, err
		}
		r.Start, r.End = time.Duration(st), time.Duration(en)
		r.Phase, r.Op, r.Series = cut(r.Phase, MaxName), cut(r.Op, MaxName), cut(r.Series, MaxName)
		if len(r.Hist) > 0 && !histOK(r.Hist) {
			r.Hist = nil
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Event is something that happened to the experiment (see Store.Event).
type Event struct {
	T       time.Time `json:"t"`
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
}

// Events lists the experiment's events in the order they happened.
func (s *Store) Events() ([]Event, error) {
	if err := s.count("events", "events", "", MaxEvents); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(`SELECT t, kind, message FROM events ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var t string
		if err := rows.Scan(&t, &e.Kind, &e.Message); err != nil {
			return nil, err
		}
		e.T, _ = time.Parse(time.RFC3339Nano, t)
		e.Kind, e.Message = cut(e.Kind, MaxName), cut(e.Message, MaxText)
		out = append(out, e)
	}
	return out, rows.Err()
}
