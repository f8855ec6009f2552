package spec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/spec/section"
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
	// What issue 32's review found: duplicate keys, long lists, wide cpu ranges, numeric
	// extremes, tags, deep nesting (small versions: the fuzzer grows them).
	for _, extra := range []string{
		"dbms: redis\ndbms: redis\ndbms: redis\n",
		"limits: {cpus: 1, cpus: 2, cpus: 3}\n",
		"placement: {client: \"0-4095,0-4095,5-1,12345678901234567890\", server: \"1\"}\n",
		"limits: {cpuset: \"0-99999\", cpus: 1e-300, memory: 8000000TiB}\n",
		"workload: {type: ycsb, targetRate: 1e-300, loadBatch: -1, loadThreads: 2000000000}\n",
		"description: !!binary G1syShtdMDtwd25lZAc=\n",
		"repetitions: {min: 2, maxx: 5, targetEfect: 3%}\n",
		"x: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: {a: 1}}}}}}}}}}}}}}}}}\n",
		"matrix: {runtime: [r1, r2, r3, r1], cpuset: [\"0\", \"0-4095\"], workload.targetRate: [\"0.000000000000000000001\"]}\n",
	} {
		f.Add([]byte(hostileBase + extra))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse(data, "fuzz.yaml", vocab)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("not a *spec.Error: %v", err)
			}
			if len(se.Problems) > MaxProblems {
				t.Fatalf("%d problems listed, over MaxProblems", len(se.Problems))
			}
			for _, p := range se.Problems {
				if _, bad := section.ControlRune(p.String()); bad {
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
