package results

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzOpen feeds arbitrary bytes as results.db to the reader: Open, the experiment id and
// every query must return an error or data, never panic, and an id that comes back is valid.
// Seeds: a real results file, a foreign and a newer one (built here), plus
// testdata/fuzz/FuzzOpen.
func FuzzOpen(f *testing.F) {
	for _, seed := range seedFiles(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenExisting(dir)
		if err != nil {
			return
		}
		defer s.Close()
		if id, err := s.ExperimentID(); err == nil && id != "" && ValidExperimentID(id) != nil {
			t.Fatalf("invalid id %q returned", id)
		}
		_, _ = s.Runs()
		_, _ = s.Cells()
		_, _ = s.Done()
		_, _ = s.Events()
		_, _ = s.Series("r")
		_, _ = s.Intervals("r")
	})
}

func seedFiles(f *testing.F) [][]byte {
	dir := f.TempDir()
	s, err := Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	_ = s.SetMeta(map[string]string{"experiment_id": "seed-0123abcd", "schema_version": SchemaVersion})
	_ = s.PutCells([]CellRecord{{ID: "platform=native", Params: map[string]string{"platform": "native"}}})
	_ = s.PutRun(context.Background(), &RunRecord{ID: "platform=native#1", CellID: "platform=native", Rep: 1, Seq: 1,
		Status: "ok", Started: time.Unix(0, 0), Ended: time.Unix(1, 0), Series: []Point{{T: time.Second, Source: "db", Metric: "m", Value: 1}}})
	s.Close()
	// Fold the WAL into the file so that the file alone is the database.
	s, _ = Open(dir)
	_, _ = s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE`)
	s.Close()
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		f.Fatal(err)
	}
	return [][]byte{b, []byte("SQLite format 3\x00"), []byte("not a database")}
}
