package runner_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/agenttest"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// aaSpec is the spec of the real runs' A/A experiments: small Redis cells that differ only in
// their replica label, baseline replica a, no quiet start; a test states what it varies.
type aaSpec struct {
	name             string
	duration, warmup string   // the workload's, e.g. "2s", "1s"
	matrix           []string // matrix lines before replica ("platform: [native]")
	reps             int
	order            string
}

func (s aaSpec) String() string {
	var m strings.Builder
	for _, l := range s.matrix {
		m.WriteString("  " + l + "\n")
	}
	return fmt.Sprintf(`apiVersion: boxbench/v1alpha1
kind: Experiment
name: %s
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 1, duration: %s, warmup: %s}
dataset: {records: 500, fieldCount: 2, fieldLength: 20}
limits: {memory: 256MiB}
matrix:
%s  replica: [a, b]
baseline: {replica: a}
repetitions: %d
order: %s
quietStart: {timeout: 0s}
`, s.name, s.duration, s.warmup, m.String(), s.reps, s.order)
}

// realConfig is the runner's configuration for text on the real platform named platform of
// this build, wired as the CLI wires it (builtin's workloads, databases and checker; the test
// binary as the pinned agent), results in out, a work root of the test's own.
func realConfig(t *testing.T, platformName, text, out string) runner.Config {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	ps := map[string]platform.Platform{platformName: builtin.Platforms(log)[platformName]}
	e, err := spec.Parse([]byte(text), "real.yaml", builtin.Vocabulary(ps))
	if err != nil {
		t.Fatal(err)
	}
	argv, env := agenttest.Command()
	return runner.Config{Spec: e, SpecText: []byte(text), OutDir: out, WorkRoot: testenv.WorkRoot(t),
		Platforms: ps, Workloads: builtin.Workload, Neighbours: builtin.Neighbour, DBMS: builtin.DBMS,
		Check: builtin.Checker(ps, false), Log: log, Agent: runner.AgentCommand{Argv: argv, Env: env}}
}
