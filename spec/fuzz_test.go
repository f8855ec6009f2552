package spec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: whatever the file, Parse does not panic; an accepted spec keeps every name that
// reaches a path within the name rule; a refused one says why without raw control
// characters. Seeds: the examples, plus testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../examples/*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(hostileBase))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse(data, "fuzz.yaml", vocab)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("not a *spec.Error: %v", err)
			}
			for _, p := range se.Problems {
				if _, bad := controlRune(p.String()); bad {
					t.Fatalf("raw control character in %q", p.String())
				}
			}
			return
		}
		if !ValidName(e.Name) {
			t.Fatalf("accepted name %q", e.Name)
		}
		for n := range e.Workloads {
			if !ValidName(n) {
				t.Fatalf("accepted workload name %q", n)
			}
		}
		for n := range e.Neighbours {
			if !ValidName(n) {
				t.Fatalf("accepted neighbour name %q", n)
			}
		}
		for _, d := range append(append([]Dim{}, e.Matrix.Dims...), e.Matrix.Zip...) {
			for _, v := range d.Values {
				if !ValidName(v) {
					t.Fatalf("accepted matrix value %q", v)
				}
			}
		}
	})
}
