package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRefWalk: a Ref finds its directories, existence and sub-groups the same way on both
// layouts, so callers that walk and remove groups never ask which one the host has.
func TestRefWalk(t *testing.T) {
	for _, c := range []struct {
		v    Version
		mk   []string // directories of the fixture tree, relative to Root
		dirs []string // want Dirs() of /boxbench/e, relative to Root
	}{
		{V1, []string{"memory/boxbench/e/r1", "memory/boxbench/e/r2", "cpu/boxbench/e/r1"},
			[]string{"cpu/boxbench/e", "memory/boxbench/e"}},
		{V2, []string{"boxbench/e/r1", "boxbench/e/r2"}, []string{"boxbench/e"}},
	} {
		t.Run(c.v.String(), func(t *testing.T) {
			root := t.TempDir()
			old := Root
			Root = root
			t.Cleanup(func() { Root = old })
			for _, d := range c.mk {
				must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
			}
			must(t, os.WriteFile(filepath.Join(memDir(c.v, root, "/boxbench/e"), "cgroup.procs"), nil, 0o644))
			e := On(c.v, "/boxbench/e")
			var want []string
			for _, d := range c.dirs {
				want = append(want, filepath.Join(root, d))
			}
			if got := e.Dirs(); !slices.Equal(got, want) {
				t.Errorf("Dirs() = %v, want %v", got, want)
			}
			if !e.Exists() || e.Child("gone").Exists() {
				t.Errorf("Exists: %v, of a missing child %v", e.Exists(), e.Child("gone").Exists())
			}
			var kids []string
			for _, k := range e.Children() {
				kids = append(kids, k.Path())
			}
			if !slices.Equal(kids, []string{"/boxbench/e/r1", "/boxbench/e/r2"}) {
				t.Errorf("Children() = %v (a file is not a group)", kids)
			}
			if got, want := e.String(), "cgroup "+c.v.String()+" /boxbench/e"; got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			if e.TakesShares() != (c.v == V1) {
				t.Errorf("TakesShares() = %v on %s", e.TakesShares(), c.v)
			}
		})
	}
	if (Ref{}).Valid() || !At("/x").Valid() {
		t.Error("the zero Ref is the only invalid one")
	}
}

// memDir is the directory of group p in the memory hierarchy (v1) or the one hierarchy (v2).
func memDir(v Version, root, p string) string {
	if v == V2 {
		return filepath.Join(root, p)
	}
	return filepath.Join(root, "memory", p)
}
