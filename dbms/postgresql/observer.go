package postgresql

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxbench/boxbench/dbms"
)

// PostgreSQL's own counters (Observer): the checkpointer's statistics over the client protocol,
// at the endpoint boxbench's client uses, as the run's role. PostgreSQL 17 moved them from
// pg_stat_bgwriter to pg_stat_checkpointer; both are read by the server's version.

// pgCounters: the statistics and the run metrics their differences become.
var pgCounters = map[string]string{
	"checkpoints":        "server_checkpoints_total", // timed + requested (≤ 16: skipped timed ones too)
	"checkpoint_write":   "server_checkpoint_write_seconds_total",
	"checkpoint_sync":    "server_checkpoint_sync_seconds_total",
	"checkpoint_buffers": "server_checkpoint_written_bytes_total",
}

const pgCheckpointerQuery = `SELECT current_setting('server_version_num')::int AS version,
  current_setting('block_size')::float8 AS block_size,
  extract(epoch FROM clock_timestamp())::float8 AS now,
  pg_postmaster_start_time() AS started`

func pgStats(ctx context.Context, a dbms.ServerAccess) (map[string]float64, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cfg.User, cfg.Database, cfg.Password = a.Credentials.User, a.Credentials.Database, a.Credentials.Password
	cfg.Host, cfg.Port = a.Endpoint.Host, uint16(a.Endpoint.Port)
	if a.Endpoint.Unix != "" {
		cfg.Host = a.Endpoint.Unix
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgresql: %w", err)
	}
	defer conn.Close(context.Background())
	var version int
	var block, now float64
	var started time.Time
	if err := conn.QueryRow(ctx, pgCheckpointerQuery).Scan(&version, &block, &now, &started); err != nil {
		return nil, fmt.Errorf("postgresql: %w", err)
	}
	q := `SELECT (checkpoints_timed + checkpoints_req)::float8, checkpoint_write_time / 1000, checkpoint_sync_time / 1000,
  buffers_checkpoint::float8 FROM pg_stat_bgwriter`
	if version >= 170000 {
		q = `SELECT (num_timed + num_requested)::float8, write_time / 1000, sync_time / 1000, buffers_written::float8
  FROM pg_stat_checkpointer`
	}
	var n, write, sync, buffers float64
	if err := conn.QueryRow(ctx, q).Scan(&n, &write, &sync, &buffers); err != nil {
		return nil, fmt.Errorf("postgresql: checkpointer statistics: %w", err)
	}
	return map[string]float64{"checkpoints": n, "checkpoint_write": write, "checkpoint_sync": sync,
		"checkpoint_buffers": buffers * block, "now": now, "started": float64(started.UnixMicro())}, nil
}

// pgWindow is what two readings say about the window between them.
func pgWindow(start, end map[string]float64) dbms.ServerWindow {
	w := dbms.ServerWindow{Metrics: map[string]float64{}}
	if start["started"] != end["started"] {
		w.Missing = append(w.Missing, "server_*: PostgreSQL restarted during the window")
		return w
	}
	dbms.CounterWindow(start, end, pgCounters, &w)
	if d := end["now"] - start["now"]; d > 0 {
		w.Span = time.Duration(d * float64(time.Second))
	}
	return w
}

// Watch reads the checkpointer's statistics at the start of the window; End reads them again
// (see pgWindow). The statistics are those the server has flushed: a checkpoint is counted when
// it completes.
func (PostgreSQL) Watch(ctx context.Context, a dbms.ServerAccess) (dbms.ServerWatch, error) {
	return dbms.WatchCounters(ctx, a, pgStats, pgWindow)
}
