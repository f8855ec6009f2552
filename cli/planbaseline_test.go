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
)

// TestPlanSaysWhichBaselineIsSkipped (issue 45): a cell whose baseline exists and is skipped
// here says so, naming that cell, which is listed among the skipped ones.
func TestPlanSaysWhichBaselineIsSkipped(t *testing.T) {
	specFile := filepath.Join(t.TempDir(), "s.yaml")
	writeFile(t, specFile, "apiVersion: boxbench/v1alpha1\nkind: Experiment\nname: sk\ndbms: redis\ndataset: {records: 1000}\nlimits: {cpus: 1, memory: 1GiB}\nrepetitions: 1\nworkload: {type: ycsb, duration: 2s}\nmatrix: {platform: [native, docker]}\n")
	e, _, err := loadSpec(specFile, builtin.Platforms(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	noNative := func(_ context.Context, c *plan.Cell) error {
		if c.Platform == "native" {
			return errors.New("redis is not installed on this host")
		}
		return nil
	}
	p, problems := plan.Expand(context.Background(), e, 1, noNative)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var out bytes.Buffer
	printPlan(&out, e, p)
	for _, w := range []string{"(no baseline: platform=native is skipped, below)", "skipped:\n  platform=native: redis is not installed"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("plan lacks %q:\n%s", w, out.String())
		}
	}
}
