package runner_test

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/testkit/testenv"
)

const placedSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: runner-placed
dbms: redis
workload: {type: ycsb, mix: c, threads: 2, duration: 6s, warmup: 0s}
dataset: {records: 500, fieldCount: 2, fieldLength: 20}
limits: {memory: 256MiB}
placement: {client: "1", server: "0"}
quietStart: {timeout: 3s, cpuBusy: 99%, diskBusy: 99.5%, window: 500ms}
cache: cold
matrix:
  platform: [native]
repetitions: 1
`

// A real native run with the server and the client on disjoint cpus, cold data, a quiet start
// and steady-state detection: the box's cpuset is the server's placement, read back from the
// kernel; the environment names both placements; every step is a fact or a metric of the run.
func TestPlacementQuietStartAndSteadyStateOnARealRun(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server")
	if len(placement.HostCPUs()) < 2 {
		testenv.Skip(t, "needs 2 cpus to place server and client apart")
	}
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.SchedSetaffinity(0, &before) }() // the runner pins this process
	rows := runStored(t, placedSpec, 1)
	row := rows[0]
	if row.Env["server_cpus"] != "0" || row.ClientCPUs != "1" {
		t.Errorf("env server_cpus %q client_cpus %q, want 0 and 1", row.Env["server_cpus"], row.ClientCPUs)
	}
	if lim, _ := row.Limits["limits"].(map[string]any); lim["cpuset"] != "0" {
		t.Errorf("limits applied %v: want cpuset 0 read back", row.Limits)
	}
	// A shared host may stay busy even by these thresholds: either outcome is recorded.
	if q := row.Facts["quiet_start"]; !strings.HasPrefix(q, "quiet after") && !strings.HasPrefix(q, "the host was not quiet within 3s") {
		t.Errorf("fact quiet_start = %q", q)
	}
	for fact, prefix := range map[string]string{"page_cache": "dropped before the run",
		"steady_state": "not applied: 6 measured intervals, MSER-5 needs 20"} {
		if !strings.HasPrefix(row.Facts[fact], prefix) {
			t.Errorf("fact %s = %q, want it to start with %q", fact, row.Facts[fact], prefix)
		}
	}
	var res struct {
		Metrics map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(row.Result, &res); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{runner.MetricQuietWait} {
		if _, ok := res.Metrics[m]; !ok {
			t.Errorf("metric %s not stored (have %v)", m, res.Metrics)
		}
	}
}
