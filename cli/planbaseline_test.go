package cli

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
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

// TestPlanCutStudy (issue 45): studies/isolation.yaml with the VM cut from its matrix validates
// with its published block unedited, and plan names the effect the cut leaves unmeasured; the
// whole study lists none.
func TestPlanCutStudy(t *testing.T) {
	data, err := os.ReadFile("../studies/isolation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	zip := "    platform: [lxc,  lxc,      vm]\n    storage:  [bind, blockdev, blockdev]\n    network:  [host, host,     bridge]\n"
	cut := "    platform: [lxc,  lxc]\n    storage:  [bind, blockdev]\n    network:  [host, host]\n"
	if !strings.Contains(string(data), zip) {
		t.Fatal("studies/isolation.yaml's zip changed: update this test's cut")
	}
	all := func(context.Context, *plan.Cell) error { return nil }
	for _, tc := range []struct {
		name, text string
		unmeasured bool
	}{{"whole", string(data), false}, {"cut", strings.Replace(string(data), zip, cut, 1), true}} {
		specFile := filepath.Join(t.TempDir(), tc.name+".yaml")
		writeFile(t, specFile, tc.text)
		e, _, err := loadSpec(specFile, builtin.Platforms(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		p, problems := plan.Expand(context.Background(), e, 1, all)
		if len(problems) > 0 {
			t.Fatalf("%s: %v", tc.name, problems)
		}
		var out bytes.Buffer
		printPlan(&out, e, p)
		const line = "  kvm-over-lxc: not measured (no cell neighbour=fsync-high, platform=vm in this matrix)\n"
		// The cut names one effect (its line and the list's head say "not measured"), the whole none.
		want := 0
		if tc.unmeasured {
			want = 2
		}
		if strings.Contains(out.String(), line) != tc.unmeasured || strings.Count(out.String(), "not measured") != want {
			t.Errorf("%s: plan says (want the line %v):\n%s", tc.name, tc.unmeasured, out.String())
		}
	}
}
