package cassandra

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxbench/boxbench/dbms"
)

// The validity rules on Cassandra's own counters (observer.go): Traits.WindowRules, in this
// order. Each says nothing when its metrics are missing.

// Warning codes (results' warnings[].code).
const (
	CodeGCPauses     = "jvm_gc_pauses"
	CodeCompaction   = "compaction_during_window"
	CodeDropped      = "dropped_messages"
	CodeBlockedTasks = "thread_pool_blocked"
)

// Thresholds of the rules.
const (
	// gcPauseRatio: the JVM's stop-the-world pauses as a share of the window above which they
	// matter; gcPauseSeconds: their total must also be at least this.
	gcPauseRatio   = 0.02
	gcPauseSeconds = 0.1
	// gcPauseMaxSeconds: a single pause longer than an operation's p99 matters only when it is
	// at least this long (10 ms).
	gcPauseMaxSeconds = 0.01
	// compactionBytes: compactions that rewrote at least this much during the window matter (a
	// compaction under way at either end of the window always does).
	compactionBytes = 1 << 20
)

var windowRules = []dbms.WindowRule{gcPauses, compaction, dropped, blockedTasks}

// gcPauses: the JVM stopped every thread of the server to collect garbage. Every operation in
// flight waited for the pause, so throughput and latency carry the collector's work, which
// follows the heap size and the allocation rate, not the box.
func gcPauses(w dbms.WindowFacts) *dbms.Finding {
	total, ok1 := w.Metric("server_gc_pause_seconds_total")
	n, ok2 := w.Metric("server_gc_pauses_total")
	if !ok1 || !ok2 || n == 0 {
		return nil
	}
	var why []string
	// The pauses were counted between the server's two readings: their share is of that span
	// when known (it differs from the workload's window by the readings' latency).
	span := w.Wall.Seconds()
	if s, ok := w.Metric("server_window_seconds"); ok && s > 0 {
		span = s
	}
	if span > 0 {
		if ratio := total / span; ratio > gcPauseRatio && total >= gcPauseSeconds {
			why = append(why, fmt.Sprintf("%.3f s in all, %s of the %.1f s window (above %s and at least %g s): "+
				"throughput is lower by about that share", total, pct(ratio), span, pct(gcPauseRatio), gcPauseSeconds))
		}
	}
	if longest, ok := w.Metric("server_gc_pause_max_seconds"); ok && longest >= gcPauseMaxSeconds {
		var slower []string
		for _, o := range w.Ops {
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
	return &dbms.Finding{Code: CodeGCPauses,
		Message: fmt.Sprintf("the server's JVM paused %s for garbage collection during the measured window: %s; "+
			"the pauses follow the heap size and the allocation rate, not the box, so compare only cells with the same "+
			"heap (memory limit) and look at the pauses before reading the tail as the box's", times(n), strings.Join(why, "; "))}
}

// compaction: the server rewrote its files (compaction) or was in the middle of it during the
// window. Compaction takes CPU and disk from the workload; whether a run catches one depends on
// when it ran, which spreads a cell's runs.
func compaction(w dbms.WindowFacts) *dbms.Finding {
	done, ok1 := w.Metric("server_compactions_completed_total")
	bytesDone, ok2 := w.Metric("server_compacted_bytes_total")
	active, ok3 := w.Metric("server_compactions_active_max")
	if !ok1 && !ok2 && !ok3 {
		return nil
	}
	flushes, _ := w.Metric("server_memtable_flushes_total")
	pending, _ := w.Metric("server_compactions_pending_max")
	if bytesDone < compactionBytes && active == 0 {
		return nil
	}
	var parts []string
	if done > 0 || bytesDone > 0 {
		parts = append(parts, fmt.Sprintf("%.0f compactions completed, %s rewritten", done, dbms.FormatBytes(bytesDone)))
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
	return &dbms.Finding{Code: CodeCompaction,
		Message: fmt.Sprintf("the server compacted its data files during the measured window (%s; threshold %s rewritten, "+
			"or any under way): compaction takes CPU and disk from the workload, and whether a run catches one depends "+
			"on its timing, so the cell's runs spread; compare cells whose runs all did or all did not, or run longer",
			strings.Join(parts, ", "), dbms.FormatBytes(compactionBytes))}
}

// dropped: the server dropped requests that waited in its queues longer than their timeout.
func dropped(w dbms.WindowFacts) *dbms.Finding {
	n, ok := w.Metric("server_dropped_messages_total")
	if !ok || n == 0 {
		return nil
	}
	return &dbms.Finding{Code: CodeDropped,
		Message: fmt.Sprintf("the server dropped %.0f messages during the measured window (requests that waited inside it "+
			"longer than their timeout): it was overloaded, those operations failed or timed out at the client, and its "+
			"throughput is a saturation figure, not a latency-bound one", n)}
}

// blockedTasks: a thread pool's queue was full, so the server refused work for a while.
func blockedTasks(w dbms.WindowFacts) *dbms.Finding {
	n, ok := w.Metric("server_threadpool_blocked_total")
	if !ok || n == 0 {
		return nil
	}
	return &dbms.Finding{Code: CodeBlockedTasks,
		Message: fmt.Sprintf("%.0f tasks were blocked in the server's thread pools during the measured window (a pool's "+
			"queue was full): the server pushed back on its own, so the stage that blocked, not the box, limited "+
			"throughput", n)}
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

// pct renders a ratio as a percentage.
func pct(r float64) string { return fmt.Sprintf("%.1f %%", 100*r) }
