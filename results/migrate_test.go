package results

import (
	"os"
	"path/filepath"
	"testing"
)

// A file of schema 1 (testdata/v1, written by the release before schema 2) opens, migrates
// once, and its runs get the typed values its facts said in prose.
func TestMigrateV1(t *testing.T) {
	dir := copyV1(t)
	for range 2 { // the second open finds schema 2 and changes nothing
		s, err := OpenExisting(dir)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := s.Meta("schema_version"); v != SchemaVersion {
			t.Errorf("schema_version %q after opening, want %s", v, SchemaVersion)
		}
		runs, err := s.Runs()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]RunRow{
			"platform=native#3": {Steady: SteadyCut, Duet: Duet{Pair: "r2-00", Round: 2}},
			"platform=docker#1": {Steady: SteadyTooShort, Duet: Duet{Pair: "r1-00", Round: 1}},
			"platform=docker#2": {Steady: SteadyNoMinimum, Duet: Duet{Pair: "r2-00", Round: 2}},
			"platform=docker#3": {Steady: SteadyCutFailed, Duet: Duet{Pair: "r3-00", Round: 3}},
			"platform=docker#4": {},
			"platform=vm#2":     {Emulated: true, Steady: SteadyOff, Duet: Duet{Pair: "r2-01", Round: 2}},
		}
		seen := 0
		for _, r := range runs {
			w, ok := want[r.ID]
			if !ok {
				continue
			}
			seen++
			if r.Emulated != w.Emulated || r.Steady != w.Steady || r.Duet != w.Duet {
				t.Errorf("%s: emulated %v steady %q duet %+v, want %v %q %+v (facts %v)",
					r.ID, r.Emulated, r.Steady, r.Duet, w.Emulated, w.Steady, w.Duet, r.Facts)
			}
		}
		if seen != len(want) {
			t.Fatalf("%d of the %d runs looked for are in the file", seen, len(want))
		}
		s.Close()
	}
}

// copyV1 copies the schema-1 file (testdata/v1) into a temporary directory: opening migrates it.
func copyV1(t *testing.T) string {
	t.Helper()
	old, err := os.ReadFile(filepath.Join("testdata", "v1", FileName))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), old, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
