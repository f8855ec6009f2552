package redis

import (
	"fmt"
	"strings"

	"github.com/boxbench/boxbench/dbms"
)

// The validity rules on Redis's own counters (observer.go): Traits.WindowRules, in this order.

// Warning codes (results' warnings[].code).
const (
	CodeForked  = "background_save_during_window"
	CodeEvicted = "keys_evicted"
)

var windowRules = []dbms.WindowRule{forked, evicted}

// forked: the server forked for a background save or a rewrite of its append-only file during
// the window. The fork copies the page tables of the whole data set (a stall of every client
// for that long) and copy-on-write then duplicates each page written, so latency and memory
// both rise for the rest of the save.
func forked(w dbms.WindowFacts) *dbms.Finding {
	n, ok1 := w.Metric("server_forks_total")
	active, ok2 := w.Metric("server_background_save_active_max")
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
	return &dbms.Finding{Code: CodeForked,
		Message: fmt.Sprintf("the server forked for a background save or append-only-file rewrite during the measured "+
			"window (%s): the fork stalls every client while it copies the page tables, and copy-on-write then "+
			"duplicates each page written, so latency and memory rise for as long as the save runs; whether a run "+
			"catches one depends on its timing", strings.Join(parts, ", "))}
}

// evicted: the server evicted keys to stay under its memory limit (maxmemory).
func evicted(w dbms.WindowFacts) *dbms.Finding {
	n, ok := w.Metric("server_evicted_keys_total")
	if !ok || n == 0 {
		return nil
	}
	return &dbms.Finding{Code: CodeEvicted,
		Message: fmt.Sprintf("the server evicted %.0f keys during the measured window to stay under its memory limit: "+
			"the data set does not fit, reads of evicted keys miss (they are not failures to the client), and the "+
			"run measures a cache, not the data set; raise the limit or shrink the data set", n)}
}
