package postgresql

import (
	"fmt"

	"github.com/boxbench/boxbench/dbms"
)

// The validity rule on PostgreSQL's own counters (observer.go): Traits.WindowRules.

// CodeCheckpoint is the checkpoint warning's code (results' warnings[].code).
const CodeCheckpoint = "checkpoint_during_window"

// checkpointBytes: checkpoints that wrote at least this much during the window matter.
const checkpointBytes = 1 << 20

var windowRules = []dbms.WindowRule{checkpoint}

// checkpoint: the database wrote its dirty pages to the data files during the window (a
// checkpoint). The writes compete with the workload for the disk, and after a checkpoint the
// first change to each page logs the whole page (full-page writes), so a write workload slows
// down; whether a run catches one depends on its timing.
func checkpoint(w dbms.WindowFacts) *dbms.Finding {
	written, ok := w.Metric("server_checkpoint_written_bytes_total")
	if !ok || written < checkpointBytes {
		return nil
	}
	n, _ := w.Metric("server_checkpoints_total")
	write, _ := w.Metric("server_checkpoint_write_seconds_total")
	sync, _ := w.Metric("server_checkpoint_sync_seconds_total")
	return &dbms.Finding{Code: CodeCheckpoint,
		Message: fmt.Sprintf("the server checkpointed during the measured window (%.0f completed, %s written in %.1f s, "+
			"%.1f s syncing; threshold %s): the checkpoint's writes compete with the workload for the disk and the "+
			"first change to each page afterwards logs the whole page, so writes slow down; whether a run catches a "+
			"checkpoint depends on its timing, so the cell's runs spread; run longer than checkpoint_timeout or compare "+
			"runs that all did", n, dbms.FormatBytes(written), write, sync, dbms.FormatBytes(checkpointBytes))}
}
