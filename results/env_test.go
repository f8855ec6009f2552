package results

import (
	"context"
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
	dir = copyV1(t)
	s, err = OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if e, err = s.Experiment(); err != nil || e.NumCPU != 4 || e.ClientCPUs != "" {
		t.Errorf("schema 1: %d cpus, client cpus %q (%v); want 4 and none", e.NumCPU, e.ClientCPUs, err)
	}
}

// RunRecord.ClientCPUs is stored where every release kept the pin, the run's env as
// client_cpus, and read back as RunRow.ClientCPUs; an older file whose run env holds the key
// (as releases before the typed field wrote it) reads the same; the caller's Env is not changed.
func TestClientCPUsStored(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutCells([]CellRecord{{ID: "platform=native", Params: map[string]string{"platform": "native"}}}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"kernel": "k"}
	for i, cpus := range []string{"1", ""} {
		rec := &RunRecord{ID: "platform=native#" + strconv.Itoa(i+1), CellID: "platform=native", Rep: i + 1, Seq: i + 1,
			Status: "ok", Started: time.Now(), Ended: time.Now(), Env: env, ClientCPUs: cpus}
		if err := s.PutRun(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	if len(env) != 1 {
		t.Errorf("PutRun changed the caller's env: %v", env)
	}
	var stored string
	if err := s.db.QueryRow(`SELECT env FROM runs WHERE id = 'platform=native#1'`).Scan(&stored); err != nil ||
		stored != `{"client_cpus":"1","kernel":"k"}` {
		t.Errorf("stored env %s (%v), want the pin as client_cpus", stored, err)
	}
	runs, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ClientCPUs != "1" || runs[1].ClientCPUs != "" || runs[1].Env["client_cpus"] != "" {
		t.Errorf("runs' client cpus: %+v", runs)
	}

	// The schema-1 file (testdata/v1) with one run's env as an older release stored a pin.
	dir := copyV1(t)
	o, err := Open(dir) // a writer: the test edits the file
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.db.Exec(`UPDATE runs SET env = json_set(env, '$.client_cpus', '0-1') WHERE id = 'platform=native#1'`); err != nil {
		t.Fatal(err)
	}
	runs, err = o.Runs()
	if err != nil {
		t.Fatal(err)
	}
	pinned := 0
	for _, r := range runs {
		switch {
		case r.ID == "platform=native#1" && r.ClientCPUs == "0-1":
			pinned++
		case r.ClientCPUs != "":
			t.Errorf("%s: client cpus %q, the file has none", r.ID, r.ClientCPUs)
		}
	}
	if pinned != 1 || len(runs) < 2 {
		t.Errorf("schema 1 with a stored pin: %d of %d runs read it, want 1", pinned, len(runs))
	}
}
