package architecture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

const module = "github.com/boxbench/boxbench/"

// A layer is one row of the table: a name and the packages it holds, as module-relative
// paths ("spec") or subtrees ("platform/...": every package below platform, not platform).
type layer struct {
	name     string
	patterns []string
}

// pkg is a package of the module as go list sees it: its path (module-relative) and the
// module packages its non-test files import.
type pkg struct {
	path    string
	imports []string
}

// readLayers parses the "## Layers" section of the document: its table's rows, lowest layer
// first; the second cell lists the layer's packages in backquotes.
func readLayers(doc []byte) ([]layer, error) {
	var layers []layer
	in := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Layers"
			continue
		}
		if !in || !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[1]) == "layer" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		l := layer{name: strings.TrimSpace(cells[1])}
		for _, f := range strings.Split(cells[2], "`") {
			if f = strings.TrimSpace(f); f != "" && f != "," {
				l.patterns = append(l.patterns, f)
			}
		}
		if len(l.patterns) == 0 {
			return nil, fmt.Errorf("layer %q lists no packages", l.name)
		}
		layers = append(layers, l)
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("no table under \"## Layers\"")
	}
	return layers, nil
}

// matches says how specifically pattern holds path: the pattern's length, or -1.
func matches(pattern, path string) int {
	if sub, ok := strings.CutSuffix(pattern, "/..."); ok {
		if strings.HasPrefix(path, sub+"/") {
			return len(sub)
		}
		return -1
	}
	if pattern == path {
		return len(pattern) + 1 // an exact name outranks any subtree holding it
	}
	return -1
}

// place returns the index of the layer holding path (the most specific pattern wins), or -1.
func place(layers []layer, path string) int {
	best, at := -1, -1
	for i, l := range layers {
		for _, p := range l.patterns {
			if n := matches(p, path); n > best {
				best, at = n, i
			}
		}
	}
	return at
}

func family(path string) string {
	first, _, _ := strings.Cut(path, "/")
	return first
}

// check returns every breach of the rule, sorted: packages in no layer, patterns that hold
// no package (a stale row), and imports of a higher layer or sideways into another family.
func check(layers []layer, pkgs []pkg) []string {
	var bad []string
	at := map[string]int{}
	for _, p := range pkgs {
		at[p.path] = place(layers, p.path)
		if at[p.path] < 0 {
			bad = append(bad, fmt.Sprintf("%s is in no layer of docs/architecture.md", p.path))
		}
	}
	for _, l := range layers {
		for _, pat := range l.patterns {
			used := false
			for _, p := range pkgs {
				used = used || matches(pat, p.path) >= 0
			}
			if !used {
				bad = append(bad, fmt.Sprintf("layer %q names %s, which holds no package", l.name, pat))
			}
		}
	}
	for _, p := range pkgs {
		for _, imp := range p.imports {
			from, to := at[p.path], at[imp]
			if from < 0 || to < 0 || to < from || (to == from && family(imp) == family(p.path)) {
				continue
			}
			how := "a higher layer"
			if to == from {
				how = "another family of its own layer"
			}
			bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s): %s", p.path, layers[from].name, imp, layers[to].name, how))
		}
	}
	sort.Strings(bad)
	return bad
}

// list runs go list over the module, with an optional overlay file (go help build).
func list(t *testing.T, overlay string) []pkg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"list", "-e", "-json=ImportPath,Imports"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./...")...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		q := pkg{path: strings.TrimPrefix(p.ImportPath, module)}
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				q.imports = append(q.imports, rel)
			}
		}
		pkgs = append(pkgs, q)
	}
	return pkgs
}

func docLayers(t *testing.T) []layer {
	t.Helper()
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	layers, err := readLayers(doc)
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	return layers
}

// TestLayers is the architecture of docs/architecture.md, held: every package in a layer,
// every import pointing down or within its family.
func TestLayers(t *testing.T) {
	for _, b := range check(docLayers(t), list(t, "")) {
		t.Error(b)
	}
}

// TestLayersCanFail adds, through go list's overlay, a file to a low package that imports
// a higher one, and one to a stage that imports another stage beside it, and expects both
// breaches named.
func TestLayersCanFail(t *testing.T) {
	dir := t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(root, "stats", "zz_scratch.go"):  "package stats\n\nimport _ \"" + module + "internal/hostenv\"\n",
		filepath.Join(root, "report", "zz_scratch.go"): "package report\n\nimport _ \"" + module + "runner\"\n",
	}
	replace := map[string]string{}
	for path, src := range files {
		name := filepath.Join(dir, filepath.Base(filepath.Dir(path))+".go")
		if err := os.WriteFile(name, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		replace[path] = name
	}
	overlay := filepath.Join(dir, "overlay.json")
	b, _ := json.Marshal(map[string]any{"Replace": replace})
	if err := os.WriteFile(overlay, b, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := strings.Join(check(docLayers(t), list(t, overlay)), "\n")
	for _, want := range []string{"stats (", "imports internal/hostenv", "report (", "imports runner ("} {
		if !strings.Contains(bad, want) {
			t.Errorf("breaches do not name %q:\n%s", want, bad)
		}
	}
}

// TestCheck holds the rule on a graph of its own: a package in no layer, a stale pattern,
// an import upward, one sideways, and the two allowed kinds.
func TestCheck(t *testing.T) {
	layers := []layer{
		{"low", []string{"a", "fam/..."}},
		{"high", []string{"b", "c", "gone"}},
	}
	pkgs := []pkg{
		{"a", []string{"b"}},         // upward
		{"b", []string{"a", "c"}},    // down: fine; sideways into another family
		{"fam/x", []string{"fam/y"}}, // own family, own layer: fine
		{"fam/y", nil},
		{"c", nil},
		{"stray", nil},
	}
	got := check(layers, pkgs)
	want := []string{
		"a (low) imports b (high): a higher layer",
		"b (high) imports c (high): another family of its own layer",
		"layer \"high\" names gone, which holds no package",
		"stray is in no layer of docs/architecture.md",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("check =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
