package runner_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/testkit/testenv"
)

const observedSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: runner-observed
workload: {type: ycsb, mix: a, threads: 2, duration: 3s, warmup: 1s}
dataset: {records: 500, fieldCount: 2, fieldLength: 20}
limits: {memory: 256MiB}
matrix:
  dbms: [redis, postgresql]
  platform: [native]
repetitions: 1
`

// Real native Redis and PostgreSQL runs store what each server said about the measured window
// (dbms.Observer, read at the end of warm-up and after the workload): Redis's INFO counters,
// PostgreSQL's checkpointer statistics, and the window they cover on the server's clock.
// (Cassandra's, read from its JVM, are checked by e2e.TestDatabases, which starts it anyway.)
// runStored runs specText natively and returns its stored runs, all of which must be ok.
func runStored(t *testing.T, specText string, n int) []results.RunRow {
	t.Helper()
	out := t.TempDir()
	sum, err := runner.Run(context.Background(), realConfig(t, "native", specText, out))
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK != n {
		t.Fatalf("summary %+v", sum)
	}
	st, err := results.OpenExisting(out)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Runs()
	if err != nil || len(rows) != n {
		t.Fatalf("runs %v %v", rows, err)
	}
	return rows
}

// metricsOf decodes a stored run's metrics.
func metricsOf(t *testing.T, row results.RunRow) map[string]float64 {
	t.Helper()
	var res struct {
		Metrics map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(row.Result, &res); err != nil {
		t.Fatal(err)
	}
	return res.Metrics
}

func TestServerCountersStored(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server", "psql")
	rows := runStored(t, observedSpec, 2)
	want := map[string][]string{
		"redis": {"server_evicted_keys_total", "server_expired_keys_total", "server_forks_total",
			"server_background_save_active_max", "server_memory_used_bytes"},
		"postgresql": {"server_checkpoints_total", "server_checkpoint_write_seconds_total",
			"server_checkpoint_sync_seconds_total", "server_checkpoint_written_bytes_total"},
	}
	for _, row := range rows {
		m := metricsOf(t, row)
		db := "redis"
		if _, ok := m["server_checkpoints_total"]; ok {
			db = "postgresql"
		}
		for _, name := range want[db] {
			if v, ok := m[name]; !ok || v < 0 {
				t.Errorf("%s (%s): %s = %v, stored %v (have %v)", row.ID, db, name, v, ok, m)
			}
		}
		if db == "redis" && m["server_memory_used_bytes"] <= 0 {
			t.Errorf("%s: redis used no memory", row.ID)
		}
		// The readings bracket the 3 s window: taken when warm-up ends and after the workload.
		if w := m[runner.MetricServerWindow]; w < 2 || w > 15 {
			t.Errorf("%s (%s): server window %v s for a 3 s measurement", row.ID, db, w)
		}
		if f := row.Facts["server_metrics_missing"]; f != "" {
			t.Errorf("%s: missing %s", row.ID, f)
		}
		for _, w := range row.Warnings {
			if w.Code == runner.CodeServerCounters {
				t.Errorf("%s: %s", row.ID, w.Message)
			}
		}
	}
}

// A cluster's every node is read: a native Redis primary and two replicas store the first
// node's counters under the plain names and the others' under server_n2_…, server_n3_….
func TestServerCountersPerNode(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server")
	clusterSpec := strings.Replace(strings.Replace(observedSpec, "dbms: [redis, postgresql]", "dbms: [redis]", 1),
		"repetitions: 1", "repetitions: 1\ntopology: {nodes: 3}", 1)
	rows := runStored(t, clusterSpec, 1)
	m := metricsOf(t, rows[0])
	for _, prefix := range []string{"server_", "server_n2_", "server_n3_"} {
		for _, name := range []string{"memory_used_bytes", "forks_total", "window_seconds"} {
			if v, ok := m[prefix+name]; !ok || v < 0 {
				t.Errorf("%s%s = %v, stored %v (have %v)", prefix, name, v, ok, m)
			}
		}
		if m[prefix+"memory_used_bytes"] <= 0 {
			t.Errorf("%smemory_used_bytes: the node used no memory", prefix)
		}
	}
	if _, ok := m["server_n1_memory_used_bytes"]; ok {
		t.Error("the first node's metrics carry its name")
	}
	if f := rows[0].Facts["server_metrics_missing"]; f != "" {
		t.Errorf("missing %s", f)
	}
}
