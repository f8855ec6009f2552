package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// foreignAssertions returns every type assertion and type-switch case, in the non-test Go
// files under root, whose type is declared in another package of the module: a capability
// there must be data the other package offers, never a type one discovers.
func foreignAssertions(root string) ([]string, error) {
	var bad []string
	fset := token.NewFileSet()
	err := goFiles(fset, root, func(path string, f *ast.File) {
		own := map[string]bool{} // local names of the module's packages this file imports
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			name := filepath.Base(rel)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			own[name] = true
		}
		foreign := func(e ast.Expr) {
			if star, ok := e.(*ast.StarExpr); ok {
				e = star.X
			}
			if sel, ok := e.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && own[id.Name] {
					rel, _ := filepath.Rel(root, path)
					bad = append(bad, fset.Position(sel.Pos()).String()[len(root)+1:]+": "+id.Name+"."+sel.Sel.Name+" asserted in "+filepath.Dir(rel))
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.TypeAssertExpr:
				if x.Type != nil {
					foreign(x.Type)
				}
			case *ast.TypeSwitchStmt:
				for _, c := range x.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						foreign(e)
					}
				}
			}
			return true
		})
	})
	sort.Strings(bad)
	return bad, err
}

// goFiles parses every non-test Go file under root (testdata, out and dot directories
// skipped) and hands it to fn.
func goFiles(fset *token.FileSet, root string, fn func(path string, f *ast.File)) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || d.Name() == "out" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fn(path, f)
		return nil
	})
}

// TestNoForeignAssertions: no non-test code asserts a type of another package of boxbench.
func TestNoForeignAssertions(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := foreignAssertions(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestForeignAssertionsCanFail runs the same search over a scratch tree holding one
// assertion of each kind, and one of its own package's type that is fine.
func TestForeignAssertionsCanFail(t *testing.T) {
	dir := t.TempDir()
	src := `package x

import (
	"` + module + `workload"
	w2 "` + module + `agent"
)

type own interface{ Own() }

func f(v any) {
	_, _ = v.(workload.Workload)
	_ = v.(*w2.Remote)
	_, _ = v.(own)
	switch v.(type) {
	case *workload.Result:
	}
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	bad, err := foreignAssertions(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(bad, "\n")
	for _, want := range []string{"workload.Workload", "w2.Remote", "workload.Result"} {
		if !strings.Contains(got, want) {
			t.Errorf("no breach names %s:\n%s", want, got)
		}
	}
	if len(bad) != 3 {
		t.Errorf("%d breaches, want 3:\n%s", len(bad), got)
	}
}
