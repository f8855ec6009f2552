package runner_test

import (
	"strings"
	"testing"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// limitSpec: native Redis held far below what it wants (1 % and 2 % of a core, so that it hits
// the quota in every period even on a loaded host), the baseline a at 1 %, b at 2 %.
const limitSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: runner-limit-design
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 4, duration: 2s, warmup: 1s}
dataset: {records: 500, fieldCount: 2, fieldLength: 20}
limits: {memory: 256MiB, cpus: 0.01}
matrix:
  zip:
    replica: [a, b]
    cpus: ["0.01", "0.02"]
baseline: {replica: a, cpus: "0.01"}
repetitions: 1
quietStart: {timeout: 0s}
`

// A CPU limit the spec set and the baseline shares is the design: the throttled baseline gets
// db_cpu_at_limit (info); a cell whose limit differs from its baseline's keeps db_cpu_throttled
// and says what the baseline asks for (issue 29). The runner is what tells the check the
// baseline's limits.
func TestThrottledByDesign(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server")
	codes := map[string]map[string]string{}
	for _, r := range runStored(t, limitSpec, 2) {
		codes[r.ID] = map[string]string{}
		for _, w := range r.Warnings {
			codes[r.ID][w.Code] = w.Severity + ": " + w.Message
		}
	}
	a, b := codes["cpus=0.01/replica=a#1"], codes["cpus=0.02/replica=b#1"]
	if a == nil || b == nil {
		t.Fatalf("runs stored: %v", codes)
	}
	if w, ok := a["db_cpu_at_limit"]; !ok || !strings.HasPrefix(w, "info: ") || a["db_cpu_throttled"] != "" {
		t.Errorf("baseline at its own 0.01-cpu limit: want db_cpu_at_limit (info) and no db_cpu_throttled, got %v", a)
	}
	if w := b["db_cpu_throttled"]; !strings.HasPrefix(w, "warning: ") || !strings.Contains(w, "its baseline asks for 0.01 cpus") {
		t.Errorf("cell at 0.02 cpus against a 0.01 baseline: want db_cpu_throttled naming the baseline's limit, got %v", b)
	}
}
