package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestDatabases runs each database added after the first three (etcd, FerretDB, Cassandra)
// through the binary, natively and in a Docker container: the data set is loaded once, the YCSB
// A mix runs against each box, and every run is stored ok with a throughput, its password
// checked by the server; Cassandra's runs store what its JVM said of the window.
func TestDatabases(t *testing.T) {
	t.Parallel()
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	for _, name := range []string{"etcd", "ferretdb", "cassandra"} {
		t.Run(name, func(t *testing.T) {
			parallel(t)
			e := newEnv(t, spec{Name: "db-" + name, DBMS: name, Records: 500, Reps: "1",
				Workload: "{type: ycsb, mix: a, threads: 2, duration: 2s, warmup: 1s}",
				Matrix:   "  platform: [native, docker]\n  storage: [bind]\n  network: [host]",
				Extra:    "baseline: {platform: native}\n"})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			out, got, _ := e.runStored(ctx, t, 2)
			for _, r := range got.Runs {
				if r.Status != "ok" || r.Throughput == nil || *r.Throughput <= 0 || r.Env["dbms_version"] == "" {
					t.Errorf("run %s: status %s throughput %v dbms_version %q", r.ID, r.Status, r.Throughput, r.Env["dbms_version"])
				}
			}
			if name == "cassandra" {
				assertServerMetrics(t, got)
			}
			if testing.Verbose() {
				os.Stdout.Write(e.report(ctx, t, out, ""))
			}
		})
	}
}

// assertServerMetrics: every Cassandra run stored what the node itself said about the measured
// window (dbms.Observer: the observer in its JVM, read through the box's Exec natively and in
// the container), with nothing missing, a heap as large as the limit gives, and a window about
// as long as the workload's.
func assertServerMetrics(t *testing.T, got storedResults) {
	t.Helper()
	for _, r := range got.Runs {
		m := r.Result.Metrics
		for _, k := range []string{"server_gc_pauses_total", "server_gc_pause_seconds_total", "server_gc_pause_max_seconds",
			"server_compactions_completed_total", "server_compacted_bytes_total", "server_dropped_messages_total",
			"server_threadpool_blocked_total", "server_compactions_active_max"} {
			if v, ok := m[k]; !ok || v < 0 {
				t.Errorf("run %s: %s = %v (stored %v)", r.ID, k, v, ok)
			}
		}
		// 512 MiB limit: a 256 MiB heap (cassandra.CassandraSizing).
		if m["server_heap_max_bytes"] != 256<<20 || m["server_heap_used_bytes"] <= 0 {
			t.Errorf("run %s: heap %v of %v", r.ID, m["server_heap_used_bytes"], m["server_heap_max_bytes"])
		}
		if w := m["server_window_seconds"]; w < 1 || w > 10 {
			t.Errorf("run %s: the server's window is %v s; the workload measured 2 s", r.ID, w)
		}
		if miss := r.Facts["server_metrics_missing"]; miss != "" {
			t.Errorf("run %s: missing %s", r.ID, miss)
		}
		for _, w := range r.Warnings {
			if w.Code == "server_counters_unavailable" {
				t.Errorf("run %s: the server's counters could not be read", r.ID)
			}
		}
	}
}
