package architecture

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// goodTree is a README and docs that keep every rule: code may say anything.
func goodTree() map[string]string {
	return map[string]string{
		"README.md": "# tool\n\n```sh\nmake setup quickstart\nmake setup test\n```\n\n" +
			"Read [the docs](docs/README.md) and [their runs](docs/a.md#the-runs-2026-12-02-1).\n",
		"docs/README.md": "# Docs\n\n- [a](a.md)\n- [log](notebook/a-log.md)\n- [home](../README.md)\n",
		"docs/a.md": "# A: what I/O costs\n\n## The runs (2026-12-02)\n\n## The runs (2026-12-02)\n\n" +
			"Node i, `we ran`, see [above](#a-what-io-costs).\n\n```\nour script [x](missing.md)\n```\n",
		"docs/notebook/a-log.md": "# A: the dated history\n\nWe ran it twice ([a](../a.md)).\n",
	}
}

// TestDocChecksCanFail runs the checks of TestDocs on a tree that keeps every rule, then
// breaks each rule once and expects each break reported, and only it.
func TestDocChecksCanFail(t *testing.T) {
	bad, err := docProblems(writeTree(t, goodTree()))
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 0 {
		t.Fatalf("a tree that keeps every rule: %q", bad)
	}
	long := "[d](docs/README.md) make setup quickstart, make setup test\n" + strings.Repeat("x", readmeLimit)
	cases := []struct {
		name, file, body string
		want             []string
	}{
		{"long README", "README.md", long,
			[]string{fmt.Sprintf("README.md has %d characters, over %d", len(long), readmeLimit)}},
		{"README without the index and the commands", "README.md", "# tool\n",
			[]string{"README.md does not link docs/README.md", "README.md does not say make setup quickstart",
				"README.md does not say make setup test"}},
		{"unindexed doc", "docs/b.md", "# B\n", []string{"docs/b.md is not linked from docs/README.md"}},
		{"missing file", "docs/notebook/a-log.md", "# log\n\nSee [b](../b.md).\n",
			[]string{"docs/notebook/a-log.md: link docs/b.md: no such file"}},
		{"missing heading", "docs/notebook/a-log.md", "# log\n\nSee [a](../a.md#the-runs-2).\n",
			[]string{"docs/notebook/a-log.md: link docs/a.md#the-runs-2: docs/a.md has no heading #the-runs-2"}},
		{"outside the repository", "docs/notebook/a-log.md", "# log\n\n[x](../../../etc/passwd)\n",
			[]string{"docs/notebook/a-log.md: link ../etc/passwd leaves the repository"}},
		{"first person", "docs/a.md", "# A\n\nHere we measured it; My host.\n",
			[]string{`docs/a.md: line 3: "we" in "Here we measured it; My host."`,
				`docs/a.md: line 3: "My" in "Here we measured it; My host."`,
				"README.md: link docs/a.md#the-runs-2026-12-02-1: docs/a.md has no heading #the-runs-2026-12-02-1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := goodTree()
			files[c.file] = c.body
			got, err := docProblems(writeTree(t, files))
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(got)
			sort.Strings(c.want)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}
