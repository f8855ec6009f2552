package check

import (
	"fmt"
	"strings"
	"time"
)

// Checks on what the database itself reported about the measured window (Facts.Server, the
// run's server_… metrics; dbms.Observer). Each is skipped when its metrics are missing.

// server returns the named server metric.
func (f Facts) server(name string) (float64, bool) {
	v, ok := f.Server[name]
	return v, ok
}

// gcPauses: the JVM stopped every thread of the server to collect garbage. Every operation in
// flight waited for the pause, so throughput and latency carry the collector's work, which
// follows the heap size and the allocation rate, not the box.
func gcPauses(f Facts, th Thresholds) []Warning {
	total, ok1 := f.server("server_gc_pause_seconds_total")
	n, ok2 := f.server("server_gc_pauses_total")
	if !ok1 || !ok2 || n == 0 {
		return nil
	}
	var why []string
	// The pauses were counted between the server's two readings: their share is of that span
	// when known (it differs from the workload's window by the readings' latency).
	span := f.Wall.Seconds()
	if s, ok := f.server("server_window_seconds"); ok && s > 0 {
		span = s
	}
	if span > 0 {
		if ratio := total / span; ratio > th.GCPauseRatio && total >= th.GCPauseSeconds {
			why = append(why, fmt.Sprintf("%.3f s in all, %s of the %.1f s window (above %s and at least %g s): "+
				"throughput is lower by about that share", total, pct(ratio), span, pct(th.GCPauseRatio), th.GCPauseSeconds))
		}
	}
	if longest, ok := f.server("server_gc_pause_max_seconds"); ok && longest >= th.GCPauseMaxSeconds {
		var slower []string
		for _, o := range f.Ops {
			if o.P99 > 0 && longest > o.P99.Seconds() {
				slower = append(slower, fmt.Sprintf("%s p99 %s", o.Op, ms(o.P99.Seconds())))
			}
		}
		if len(slower) > 0 {
			why = append(why, fmt.Sprintf("the longest pause, %s, is longer than %s: the latency tail beyond p99 "+
				"is the collector's pauses", ms(longest), strings.Join(slower, ", ")))
		}
	}
	if len(why) == 0 {
		return nil
	}
	return []Warning{{Code: CodeGCPauses, Severity: SeverityWarning,
		Message: fmt.Sprintf("the server's JVM paused %s for garbage collection during the measured window: %s; "+
			"the pauses follow the heap size and the allocation rate, not the box, so compare only cells with the same "+
			"heap (memory limit) and look at the pauses before reading the tail as the box's", times(n), strings.Join(why, "; "))}}
}

// compaction: the server rewrote its files (compaction) or was in the middle of it during the
// window. Compaction takes CPU and disk from the workload; whether a run catches one depends on
// when it ran, which spreads a cell's runs.
func compaction(f Facts, th Thresholds) []Warning {
	done, ok1 := f.server("server_compactions_completed_total")
	bytesDone, ok2 := f.server("server_compacted_bytes_total")
	active, ok3 := f.server("server_compactions_active_max")
	if !ok1 && !ok2 && !ok3 {
		return nil
	}
	flushes, _ := f.server("server_memtable_flushes_total")
	pending, _ := f.server("server_compactions_pending_max")
	if bytesDone < th.CompactionBytes && active == 0 {
		return nil
	}
	var parts []string
	if done > 0 || bytesDone > 0 {
		parts = append(parts, fmt.Sprintf("%.0f compactions completed, %s rewritten", done, bytes(bytesDone)))
	}
	if active > 0 {
		parts = append(parts, fmt.Sprintf("up to %.0f under way at the start or end", active))
	}
	if pending > 0 {
		parts = append(parts, fmt.Sprintf("up to %.0f pending", pending))
	}
	if flushes > 0 {
		parts = append(parts, fmt.Sprintf("%.0f memtable flushes", flushes))
	}
	return []Warning{{Code: CodeCompaction, Severity: SeverityWarning,
		Message: fmt.Sprintf("the server compacted its data files during the measured window (%s; threshold %s rewritten, "+
			"or any under way): compaction takes CPU and disk from the workload, and whether a run catches one depends "+
			"on its timing, so the cell's runs spread; compare cells whose runs all did or all did not, or run longer",
			strings.Join(parts, ", "), bytes(th.CompactionBytes))}}
}

// dropped: the server dropped requests that waited in its queues longer than their timeout.
func dropped(f Facts, _ Thresholds) []Warning {
	n, ok := f.server("server_dropped_messages_total")
	if !ok || n == 0 {
		return nil
	}
	return []Warning{{Code: CodeDropped, Severity: SeverityWarning,
		Message: fmt.Sprintf("the server dropped %.0f messages during the measured window (requests that waited inside it "+
			"longer than their timeout): it was overloaded, those operations failed or timed out at the client, and its "+
			"throughput is a saturation figure, not a latency-bound one", n)}}
}

// blockedTasks: a thread pool's queue was full, so the server refused work for a while.
func blockedTasks(f Facts, _ Thresholds) []Warning {
	n, ok := f.server("server_threadpool_blocked_total")
	if !ok || n == 0 {
		return nil
	}
	return []Warning{{Code: CodeBlockedTasks, Severity: SeverityWarning,
		Message: fmt.Sprintf("%.0f tasks were blocked in the server's thread pools during the measured window (a pool's "+
			"queue was full): the server pushed back on its own, so the stage that blocked, not the box, limited "+
			"throughput", n)}}
}

// times renders a count of occurrences.
func times(n float64) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%.0f times", n)
}

// ms renders seconds as milliseconds.
func ms(s float64) string { return fmt.Sprintf("%.1f ms", s*float64(time.Second/time.Millisecond)) }

// checkpoint: the database wrote its dirty pages to the data files during the window (a
// PostgreSQL checkpoint). The writes compete with the workload for the disk, and after a
// checkpoint the first change to each page logs the whole page (full-page writes), so a write
// workload slows down; whether a run catches one depends on its timing.
func checkpoint(f Facts, th Thresholds) []Warning {
	written, ok := f.server("server_checkpoint_written_bytes_total")
	if !ok || written < th.CheckpointBytes {
		return nil
	}
	n, _ := f.server("server_checkpoints_total")
	write, _ := f.server("server_checkpoint_write_seconds_total")
	sync, _ := f.server("server_checkpoint_sync_seconds_total")
	return []Warning{{Code: CodeCheckpoint, Severity: SeverityWarning,
		Message: fmt.Sprintf("the server checkpointed during the measured window (%.0f completed, %s written in %.1f s, "+
			"%.1f s syncing; threshold %s): the checkpoint's writes compete with the workload for the disk and the "+
			"first change to each page afterwards logs the whole page, so writes slow down; whether a run catches a "+
			"checkpoint depends on its timing, so the cell's runs spread; run longer than checkpoint_timeout or compare "+
			"runs that all did", n, bytes(written), write, sync, bytes(th.CheckpointBytes))}}
}

// forked: the server forked for a background save or a rewrite of its append-only file (Redis)
// during the window. The fork copies the page tables of the whole data set (a stall of every
// client for that long) and copy-on-write then duplicates each page written, so latency and
// memory both rise for the rest of the save.
func forked(f Facts, _ Thresholds) []Warning {
	n, ok1 := f.server("server_forks_total")
	active, ok2 := f.server("server_background_save_active_max")
	if (!ok1 || n == 0) && (!ok2 || active == 0) {
		return nil
	}
	var parts []string
	if n > 0 {
		parts = append(parts, fmt.Sprintf("%.0f forks", n))
	}
	if active > 0 {
		parts = append(parts, "one under way at the start or end")
	}
	return []Warning{{Code: CodeForked, Severity: SeverityWarning,
		Message: fmt.Sprintf("the server forked for a background save or append-only-file rewrite during the measured "+
			"window (%s): the fork stalls every client while it copies the page tables, and copy-on-write then "+
			"duplicates each page written, so latency and memory rise for as long as the save runs; whether a run "+
			"catches one depends on its timing", strings.Join(parts, ", "))}}
}

// evicted: the server evicted keys to stay under its memory limit (Redis maxmemory).
func evicted(f Facts, _ Thresholds) []Warning {
	n, ok := f.server("server_evicted_keys_total")
	if !ok || n == 0 {
		return nil
	}
	return []Warning{{Code: CodeEvicted, Severity: SeverityWarning,
		Message: fmt.Sprintf("the server evicted %.0f keys during the measured window to stay under its memory limit: "+
			"the data set does not fit, reads of evicted keys miss (they are not failures to the client), and the "+
			"run measures a cache, not the data set; raise the limit or shrink the data set", n)}}
}
