package results

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The client's pin and the host's CPU count are typed fields read from where every schema
// stores them, the env: the experiment's (meta) and each run's.
func TestTypedFromEnv(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta(map[string]string{"name": "e", "env": `{"client_cpus":"1","num_cpu":"4","kernel":"k"}`}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCells([]CellRecord{{ID: "platform=native", Params: map[string]string{"platform": "native"}}}); err != nil {
		t.Fatal(err)
	}
	for i, env := range []map[string]string{{"client_cpus": "0-1"}, {"kernel": "k"}} {
		rec := &RunRecord{ID: "platform=native#" + strconv.Itoa(i+1), CellID: "platform=native", Rep: i + 1, Seq: i + 1,
			Status: "ok", Started: time.Now(), Ended: time.Now(), Env: env}
		if err := s.PutRun(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	e, err := s.Experiment()
	if err != nil {
		t.Fatal(err)
	}
	if e.ClientCPUs != "1" || e.NumCPU != 4 {
		t.Errorf("experiment: client cpus %q, %d cpus; want 1 and 4", e.ClientCPUs, e.NumCPU)
	}
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ClientCPUs != "0-1" || runs[1].ClientCPUs != "" {
		t.Errorf("runs' client cpus: %+v", runs)
	}
	s.Close()

	// A file of schema 1 (testdata/v1) recorded the host's CPUs and no pin.
	old, err := os.ReadFile(filepath.Join("testdata", "v1", FileName))
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), old, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if e, err = s.Experiment(); err != nil || e.NumCPU != 4 || e.ClientCPUs != "" {
		t.Errorf("schema 1: %d cpus, client cpus %q (%v); want 4 and none", e.NumCPU, e.ClientCPUs, err)
	}
}
