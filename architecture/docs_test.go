package architecture

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The documentation's promises to its readers, held: the README stays short and leads to the
// index of the docs, the index lists every document, every relative link between them
// resolves (to a file, and to a heading where it names one), and the docs outside the
// notebook (the dated history, kept verbatim) do not narrate in the first person.

const readmeLimit = 8000 // characters

var (
	fence      = regexp.MustCompile("(?s)```.*?```")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
	firstWords = regexp.MustCompile(`\b(?i:we|we're|we've|we'll|our|ours|ourselves|us|my|me|myself)\b|\bI\b`)
)

// prose is src with its fenced code blocks and code spans blanked (newlines kept, so line
// numbers stay): what is in code is a command or a value, not a link or a sentence.
func prose(src string) string {
	src = fence.ReplaceAllStringFunc(src, func(s string) string {
		return strings.Repeat("\n", strings.Count(s, "\n"))
	})
	return codeSpan.ReplaceAllString(src, "``")
}

// slug is the anchor GitHub gives a heading: lower case, every character but letters,
// digits, spaces, hyphens and underscores dropped, spaces made hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a document's headings, a repeated one numbered as GitHub
// numbers it (name, name-1, name-2 …).
func anchors(src string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(src, ""), -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// markdown lists README.md and every .md file under docs/, relative to root, slash-separated.
func markdown(root string) ([]string, error) {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files[1:])
	return files, err
}

// links returns the relative link targets of a document (module-root-relative, cleaned,
// with their #fragment), skipping URLs and links inside code.
func links(file, src string) []string {
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(prose(src), -1) {
		t := m[1]
		if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
			continue
		}
		target, frag, _ := strings.Cut(t, "#")
		if target == "" {
			target = file
		} else {
			target = path.Join(path.Dir(file), target)
		}
		if frag != "" {
			target += "#" + frag
		}
		out = append(out, target)
	}
	return out
}

// brokenLinks reports every relative link of the files that names no file under root, or a
// heading its document does not have.
func brokenLinks(root string, files []string) ([]string, error) {
	var bad []string
	docs := map[string]map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		for _, l := range links(f, string(src)) {
			target, frag, _ := strings.Cut(l, "#")
			if strings.HasPrefix(target, "../") {
				bad = append(bad, fmt.Sprintf("%s: link %s leaves the repository", f, l))
				continue
			}
			full := filepath.Join(root, filepath.FromSlash(target))
			if _, err := os.Stat(full); err != nil {
				bad = append(bad, fmt.Sprintf("%s: link %s: no such file", f, l))
				continue
			}
			if frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if docs[target] == nil {
				b, err := os.ReadFile(full)
				if err != nil {
					return nil, err
				}
				docs[target] = anchors(string(b))
			}
			if !docs[target][frag] {
				bad = append(bad, fmt.Sprintf("%s: link %s: %s has no heading #%s", f, l, target, frag))
			}
		}
	}
	return bad, nil
}

// unindexed reports every document under docs/ that docs/README.md does not link to.
func unindexed(root string, files []string) ([]string, error) {
	index, err := os.ReadFile(filepath.Join(root, "docs", "README.md"))
	if err != nil {
		return nil, err
	}
	linked := map[string]bool{}
	for _, l := range links("docs/README.md", string(index)) {
		target, _, _ := strings.Cut(l, "#")
		linked[target] = true
	}
	var bad []string
	for _, f := range files {
		if strings.HasPrefix(f, "docs/") && f != "docs/README.md" && !linked[f] {
			bad = append(bad, f+" is not linked from docs/README.md")
		}
	}
	return bad, nil
}

// firstPerson reports the lines of src whose prose says I, we, our, us, my or me ("I/O" is
// not the pronoun).
func firstPerson(src string) []string {
	var bad []string
	for i, line := range strings.Split(prose(src), "\n") {
		for _, m := range firstWords.FindAllStringIndex(line, -1) {
			if line[m[0]:m[1]] == "I" && strings.HasPrefix(line[m[1]:], "/") {
				continue
			}
			bad = append(bad, fmt.Sprintf("line %d: %q in %q", i+1, line[m[0]:m[1]], strings.TrimSpace(line)))
		}
	}
	return bad
}

// docProblems runs every check on the tree at root.
func docProblems(root string) ([]string, error) {
	files, err := markdown(root)
	if err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, err
	}
	var bad []string
	if n := utf8.RuneCount(readme); n > readmeLimit {
		bad = append(bad, fmt.Sprintf("README.md has %d characters, over %d", n, readmeLimit))
	}
	if !strings.Contains(prose(string(readme)), "](docs/README.md)") {
		bad = append(bad, "README.md does not link docs/README.md")
	}
	for _, cmd := range []string{"make setup quickstart", "make setup test"} {
		if !strings.Contains(string(readme), cmd) {
			bad = append(bad, "README.md does not say "+cmd)
		}
	}
	more, err := unindexed(root, files)
	if err != nil {
		return nil, err
	}
	bad = append(bad, more...)
	more, err = brokenLinks(root, files)
	if err != nil {
		return nil, err
	}
	bad = append(bad, more...)
	for _, f := range files {
		if strings.HasPrefix(f, "docs/notebook/") {
			continue // the dated history, verbatim
		}
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		for _, b := range firstPerson(string(src)) {
			bad = append(bad, f+": "+b)
		}
	}
	return bad, nil
}

// TestDocs holds the README and docs/ to the rules above.
func TestDocs(t *testing.T) {
	bad, err := docProblems("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}
