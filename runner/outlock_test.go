package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform/fake"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
)

// Two experiments started at once into one --out: the second is refused while the first
// holds it, naming this process, and changes nothing; the first stores all its runs under its
// own experiment id.
func TestOutHeldByOneExperiment(t *testing.T) {
	f := newFake(t, "", "repetitions: 2\n", fake.Options{})
	measuring, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.cfg.Progress = &phaseHook{at: func(_ plan.Run, phase string) {
		if phase == "warmup+measure" {
			once.Do(func() { close(measuring); <-proceed })
		}
	}}
	type result struct {
		sum runner.Summary
		err error
	}
	first := make(chan result, 1)
	go func() {
		sum, err := f.run(context.Background(), false)
		first <- result{sum, err}
	}()
	select {
	case <-measuring:
	case r := <-first:
		t.Fatalf("the first experiment ended before measuring: %+v %v", r.sum, r.err)
	case <-time.After(60 * time.Second):
		t.Fatal("the first experiment did not reach its measurement")
	}
	before := fileSums(t, f.out)
	second := f.cfg
	second.Progress = nil
	_, err := runner.Run(context.Background(), second)
	if err == nil || !errors.Is(err, results.ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("the second experiment: %v, want it refused as in use by pid %d", err, os.Getpid())
	}
	if after := fileSums(t, f.out); after != before {
		t.Errorf("the refused experiment changed --out:\n%s\nwas\n%s", after, before)
	}
	close(proceed)
	r := <-first
	if r.err != nil || r.sum.OK != 2 {
		t.Fatalf("the first experiment: %+v %v", r.sum, r.err)
	}
	st := openStore(t, f.out)
	if id, err := st.ExperimentID(); err != nil || id != r.sum.ExperimentID {
		t.Errorf("results.db names experiment %q (%v), want the first's %q", id, err, r.sum.ExperimentID)
	}
	if n := len(storedRuns(t, f.out)); n != 2 {
		t.Errorf("%d runs stored, want 2", n)
	}
}

// fileSums are the names, sizes and times of the files in dir.
func fileSums(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s", e.Name(), fi.Size(), fi.ModTime()))
	}
	return strings.Join(out, "\n")
}
