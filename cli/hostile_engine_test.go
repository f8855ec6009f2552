package cli

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
)

// TestEngineStringsReachTheTerminalEscaped: what an engine says (versions, runtime names, the
// error messages in skip reasons) reaches doctor's findings and plan's skipped cells escaped.
// Both print to the app's stdout, a TerminalWriter by its type.
func TestEngineStringsReachTheTerminalEscaped(t *testing.T) {
	var raw bytes.Buffer
	a := newApp(&raw, &raw)
	printFindings(a.stdout, []platform.Finding{
		{Area: "docker" + evil, Name: "runtime runc" + evil, Detail: "engine 27.0" + evil},
		{Area: "docker", Name: "runtime runsc", Detail: "Error response from daemon: " + evil, Fix: "install" + evil}})

	specFile := filepath.Join(t.TempDir(), "s.yaml")
	writeFile(t, specFile, "apiVersion: boxbench/v1alpha1\nkind: Experiment\nname: eng\ndbms: redis\ndataset: {records: 1000}\nlimits: {cpus: 1, memory: 1GiB}\nrepetitions: 1\nworkload: {type: ycsb, duration: 2s}\nmatrix: {platform: [native, docker]}\n")
	e, _, err := loadSpec(specFile, builtin.Platforms(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	engine := func(_ context.Context, c *plan.Cell) error { // what dockerd answered, as the checker passes it on
		if c.Platform == "docker" {
			return errors.New("docker: Error response from daemon: " + evil)
		}
		return nil
	}
	p, problems := plan.Expand(context.Background(), e, 1, engine)
	if len(problems) > 0 || len(p.Skipped) == 0 {
		t.Fatalf("plan: %v, skipped %d", problems, len(p.Skipped))
	}
	printPlan(a.stdout, e, p)
	if err := a.stdout.Flush(); err != nil {
		t.Fatal(err)
	}
	out := raw.String()
	if at, bad := rawControl(out); bad {
		t.Errorf("doctor's or plan's output holds a raw control character near %q", at)
	}
	if n := strings.Count(out, `\x1b]0;owned\a`); n < 4 {
		t.Errorf("the engine's strings are not all in the output, escaped (%d):\n%s", n, out)
	}
}
