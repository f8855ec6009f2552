package cassandra

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/boxbench/boxbench/dbms"
)

// Cassandra's own counters (Observer): boxbench's observer, a Java agent in the node's JVM
// (scripts/cassandra/BoxbenchObserver.java, compiled by scripts/cassandra.sh into
// cassandraObserverJar, one of the built files), writes the JVM's garbage-collection and heap
// figures and the node's compaction, flush, dropped-message and thread-pool metrics to
// cassandraStatsFile in the data directory when a reading is asked for (by creating
// cassandraStatsFile.want). The reading goes through the box's Exec, so it works on every
// platform, whatever network the client uses, and opens no port (JMX stays off).
const (
	cassandraObserverJar = CassandraHome + "/observer/boxbench-observer.jar"
	cassandraStatsFile   = "boxbench-server-stats"
)

// cassandraCounters: the observer's counters (since the JVM started) and the run metrics their
// differences become.
var cassandraCounters = map[string]string{
	"gc_pauses_total":             "server_gc_pauses_total",
	"gc_pause_ms_total":           "server_gc_pause_seconds_total", // scaled below
	"compactions_completed_total": "server_compactions_completed_total",
	"compacted_bytes_total":       "server_compacted_bytes_total",
	"memtable_flushes_total":      "server_memtable_flushes_total",
	"dropped_messages_total":      "server_dropped_messages_total",
	"threadpool_blocked_total":    "server_threadpool_blocked_total",
}

// cassandraLevels: the observer's levels and the run metrics they become, the larger of the
// two readings (what was pending or running at either end of the window), except the heap,
// which is its state at the end.
var cassandraLevels = map[string]string{
	"compactions_pending": "server_compactions_pending_max",
	"compactions_active":  "server_compactions_active_max",
	"threadpool_pending":  "server_threadpool_pending_max",
}

// cassandraReading is one parsed stats file.
type cassandraReading struct {
	values  map[string]float64
	missing map[string]string // observer name → why
	pauses  []gcPause
}

type gcPause struct{ endMS, ms float64 }

// parseCassandraStats parses the observer's file (see BoxbenchObserver.java).
func parseCassandraStats(text string) (cassandraReading, error) {
	r := cassandraReading{values: keyValues(text), missing: map[string]string{}}
	if r.values["boxbench_observer"] != 1 {
		return r, fmt.Errorf("not a boxbench observer reading (version 1): %.80q", text)
	}
	if r.values["time_ms"] <= 0 {
		return r, errors.New("the observer's reading has no time_ms")
	}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "missing":
			r.missing[f[1]] = strings.Join(f[2:], " ")
		case len(f) == 3 && f[0] == "pause":
			end, err1 := strconv.ParseFloat(f[1], 64)
			ms, err2 := strconv.ParseFloat(f[2], 64)
			if err1 != nil || err2 != nil {
				return r, fmt.Errorf("the observer's reading has a bad pause line %q", line)
			}
			r.pauses = append(r.pauses, gcPause{endMS: end, ms: ms})
		}
	}
	return r, nil
}

// cassandraWindow is what two readings say about the window between them.
func cassandraWindow(start, end cassandraReading) dbms.ServerWindow {
	w := dbms.ServerWindow{Metrics: map[string]float64{}}
	if start.values["jvm_start_ms"] != end.values["jvm_start_ms"] {
		w.Missing = append(w.Missing, "server_*: the JVM restarted during the window")
		return w
	}
	dbms.CounterWindow(start.values, end.values, cassandraCounters, &w)
	if v, ok := w.Metrics["server_gc_pause_seconds_total"]; ok {
		w.Metrics["server_gc_pause_seconds_total"] = v / 1000
	}
	for name, metric := range cassandraLevels {
		var vs []float64
		for _, r := range []cassandraReading{start, end} {
			if v, ok := r.values[name]; ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			w.Missing = append(w.Missing, metric+": "+end.missing[name])
			continue
		}
		w.Metrics[metric] = slices.Max(vs) // what either reading saw
	}
	for _, name := range []string{"heap_used_bytes", "heap_max_bytes"} {
		if v, ok := end.values[name]; ok {
			w.Metrics["server_"+name] = v
		} else {
			w.Missing = append(w.Missing, "server_"+name+": not reported")
		}
	}
	// The longest single pause that ended inside the window (the observer keeps the last 1024;
	// more in one window than that is itself a finding the totals carry).
	t0, t1 := start.values["time_ms"], end.values["time_ms"]
	longest := 0.0
	for _, p := range end.pauses {
		if p.endMS > t0 && p.endMS <= t1 {
			longest = max(longest, p.ms)
		}
	}
	if _, ok := w.Metrics["server_gc_pauses_total"]; ok {
		w.Metrics["server_gc_pause_max_seconds"] = longest / 1000
	}
	for _, name := range []string{"compactions_completed_total", "compacted_bytes_total", "memtable_flushes_total",
		"dropped_messages_total", "threadpool_blocked_total"} {
		if why, ok := end.missing[name]; ok {
			w.Missing = append(w.Missing, cassandraCounters[name]+": "+why)
		}
	}
	sort.Strings(w.Missing)
	w.Span = time.Duration((t1 - t0) * float64(time.Millisecond))
	return w
}

// readCassandraStats asks the observer for a reading through the box's Exec: it removes the
// last reading, creates the request file, waits (up to 10 s: an emulated VM is slow) until the
// observer has removed it, and prints the new reading. The file names are constants.
func readCassandraStats(ctx context.Context, exec func(context.Context, []string) ([]byte, error)) (cassandraReading, error) {
	if exec == nil {
		return cassandraReading{}, errors.New("the box cannot run commands")
	}
	const f = cassandraStatsFile
	script := `rm -f ` + f + ` && : >` + f + `.want || exit 1
i=0
while [ -e ` + f + `.want ]; do
  i=$((i+1))
  if [ $i -gt 200 ]; then rm -f ` + f + `.want; echo "boxbench: the observer in Cassandra's JVM did not answer in 10 s" >&2; exit 3; fi
  sleep 0.05
done
cat ` + f
	out, err := exec(ctx, []string{"/bin/sh", "-c", script})
	if err != nil {
		return cassandraReading{}, fmt.Errorf("read Cassandra's counters: %w", err)
	}
	return parseCassandraStats(string(out))
}

// Watch reads the observer's counters at the start of the window; End reads them again, and
// the window's metrics are the differences (see cassandraWindow).
func (Cassandra) Watch(ctx context.Context, a dbms.ServerAccess) (dbms.ServerWatch, error) {
	read := func(ctx context.Context, a dbms.ServerAccess) (cassandraReading, error) {
		return readCassandraStats(ctx, a.Exec)
	}
	return dbms.WatchCounters(ctx, a, read, cassandraWindow)
}

// keyValues parses "name value" lines (other lines and unparsable values are skipped; the
// caller decides what is missing).
func keyValues(text string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(f[1], &v); err == nil {
			out[f[0]] = v
		}
	}
	return out
}
