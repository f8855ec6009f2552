package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/boxbench/boxbench/results"
)

var update = flag.Bool("update", false, "rewrite report/testdata/*.golden (and screenshot.png)")

// fixtures are the experiments the golden tests render.
var fixtures = []struct {
	name  string
	spec  string
	cells func() []fixCell
}{
	{"quickstart", quickstartSpec, quickstartCells},
	{"edge", edgeSpec, edgeCells},
	{"sweep", sweepSpec, sweepCells},
	{"duet", duetSpec, duetCells},
	{"cluster", clusterSpec, clusterCells},
}

const edgeSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: edge
dbms: redis
workload: {type: ycsb, mix: read-only, threads: 8, duration: 10s, warmup: 3s}
matrix:
  platform: [native, docker, kata]
  storage: [bind, tmpfs, volume]
exclude:
  - {platform: kata, storage: bind}
repetitions: 2
baseline: {platform: native}
`

// fixtureRoot holds the fixture experiments, written once per test binary: writing one
// takes seconds (hundreds of histograms, one fsynced transaction per run).
var (
	fixtureRoot string
	fixtureDirs = map[string]string{}
)

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	fixtureRoot, err = os.MkdirTemp("", "boxbench-report-test-")
	if err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(fixtureRoot)
	os.Exit(code)
}

// openFixture opens the named fixture experiment, writing it on first use.
func openFixture(t testing.TB, name string) *results.Store {
	t.Helper()
	dir, ok := fixtureDirs[name]
	if !ok {
		for _, f := range fixtures {
			if f.name == name {
				dir = filepath.Join(fixtureRoot, name)
				writeFixture(t, dir, f.name, f.spec, f.cells())
				fixtureDirs[name] = dir
			}
		}
		if dir == "" {
			t.Fatalf("no fixture %q", name)
		}
	}
	st, err := results.OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestGolden(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			st := openFixture(t, f.name)
			r, err := Build(st)
			if err != nil {
				t.Fatal(err)
			}
			outputs := map[string]func(*bytes.Buffer) error{
				"txt":  func(b *bytes.Buffer) error { return WriteText(b, r) },
				"json": func(b *bytes.Buffer) error { return WriteJSON(b, r) },
				"csv":  func(b *bytes.Buffer) error { return WriteCSV(b, r) },
				"html": func(b *bytes.Buffer) error { return WriteHTML(b, r) },
			}
			for ext, write := range outputs {
				var b bytes.Buffer
				if err := write(&b); err != nil {
					t.Fatalf("%s: %v", ext, err)
				}
				golden(t, f.name+"."+ext+".golden", b.Bytes())
				// report --html replaces only a file whose head says it is a boxbench report.
				if head := b.Bytes()[:min(b.Len(), 1024)]; ext == "html" && !bytes.Contains(head, []byte(HTMLGenerator)) {
					t.Errorf("the page's first KiB lacks %s", HTMLGenerator)
				}
			}
		})
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test ./report -run TestGolden -update and review the diff\n%s",
			name, firstDiff(want, got))
	}
}

// firstDiff shows the first differing line.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + string(clip(w)) + "\n  got:  " + string(clip(g))
		}
	}
	return ""
}

func clip(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "..."...)
	}
	return b
}
