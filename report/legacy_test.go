package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/results"
)

// A results file written by the previous release (schema 1, results/testdata/v1) opens and
// reports what that release reported: the golden files are its output, bar the fixes named in
// the commits that changed them.
func TestLegacyResultsFile(t *testing.T) {
	r := legacyReport(t)
	for ext, write := range map[string]func(*bytes.Buffer) error{
		"txt":  func(b *bytes.Buffer) error { return WriteText(b, r) },
		"json": func(b *bytes.Buffer) error { return WriteJSON(b, r) },
		"csv":  func(b *bytes.Buffer) error { return WriteCSV(b, r) },
		"html": func(b *bytes.Buffer) error { return WriteHTML(b, r) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		golden(t, "legacy-v1."+ext+".golden", b.Bytes())
	}
}

// legacyReport is the report of the previous release's results file (results/testdata/v1).
func legacyReport(t *testing.T) *Report {
	t.Helper()
	old, err := os.ReadFile(filepath.Join("..", "results", "testdata", "v1", results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.FileName), old, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := results.OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := Build(st)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
