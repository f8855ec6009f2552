package architecture

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/builtin/workloads"
)

// namedIn returns every comparison (==, !=, a switch case) of a string literal that is one
// of names, in the non-test Go files under each of dirs: the packages that must never learn
// which platform, database or workload they handle.
func namedIn(root string, dirs []string, names map[string]bool) ([]string, error) {
	var bad []string
	fset := token.NewFileSet()
	lit := func(e ast.Expr) {
		if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
			if s, err := strconv.Unquote(b.Value); err == nil && names[s] {
				p := fset.Position(b.Pos())
				rel, _ := filepath.Rel(root, p.Filename)
				bad = append(bad, rel+":"+strconv.Itoa(p.Line)+": compares "+b.Value)
			}
		}
	}
	for _, d := range dirs {
		err := goFiles(fset, filepath.Join(root, d), func(path string, f *ast.File) {
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.BinaryExpr:
					if x.Op == token.EQL || x.Op == token.NEQ {
						lit(x.X)
						lit(x.Y)
					}
				case *ast.SwitchStmt:
					if x.Tag == nil {
						break
					}
					for _, c := range x.Body.List {
						for _, e := range c.(*ast.CaseClause).List {
							lit(e)
						}
					}
				}
				return true
			})
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(bad)
	return bad, nil
}

// TestNamesCanFail finds each kind of comparison in a scratch file.
func TestNamesCanFail(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nfunc f(a, b string) bool {\n\tswitch a {\n\tcase \"docker\":\n\t}\n\treturn b != \"fio\" || \"host\" == a\n}\n"
	if err := os.MkdirAll(filepath.Join(dir, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x", "x.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	bad, err := namedIn(dir, []string{"x"}, map[string]bool{"docker": true, "fio": true})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 2 {
		t.Errorf("found %q, want the docker case and the fio comparison", bad)
	}
}

// TestNoNames: runner, spec, plan, report and check compare no name of a platform, a
// database or a workload kind of this build: what they decide on is data the part offers.
func TestNoNames(t *testing.T) {
	names := map[string]bool{}
	for name := range builtin.Platforms(nil) {
		names[name] = true
	}
	for _, name := range databases.Names() {
		names[name] = true
	}
	for _, k := range workloads.All() {
		names[k.Name] = true
	}
	if !names[builtin.Baseline] || len(names) < 3 {
		t.Fatalf("the build's names %v miss the baseline platform %s", names, builtin.Baseline)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := namedIn(root, []string{"runner", "spec", "plan", "report", "check"}, names)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}
