package section

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type inner struct {
	Size int `yaml:"size"`
}

type sample struct {
	Name  string           `yaml:"name"`
	Inner inner            `yaml:"inner"`
	ByKey map[string]inner `yaml:"byKey"`
	Skip  string           `yaml:"-"`
}

func node(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0].Content[1] // the value of the document's one key
}

// TestDecode: unknown keys at any depth (a struct, a map's values) and values of the wrong type
// are problems on their lines naming the field, all at once; the valid keys are decoded.
func TestDecode(t *testing.T) {
	n := node(t, `sec:
  name: a
  inner: {size: many, sise: 2}
  byKey:
    x: {size: 1, colour: red}
  skip: yes
`)
	var s sample
	ps := Decode(n, "sec", &s)
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	want := []string{
		`line 3: sec.inner.sise: unknown field "sise" (did you mean "size"?); valid here: size`,
		`line 5: sec.byKey.x.colour: unknown field "colour"; valid here: size`,
		`line 6: sec.skip: unknown field "skip"; valid here: name, inner, byKey`,
		`line 3: sec.inner.size: "many" is text, but a whole number is expected here`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s.Name != "a" || s.ByKey["x"].Size != 1 {
		t.Errorf("decoded %+v", s)
	}
	if ps := Decode(nil, "sec", &s); ps != nil {
		t.Errorf("nil node: %v", ps)
	}
}

// TestTypeProblem: yaml.v3's messages in the spec's words, including a list or mapping given
// where a single value belongs (yaml.v3 quotes no value for those).
func TestTypeProblem(t *testing.T) {
	for msg, want := range map[string]string{
		"line 4: cannot unmarshal !!str `x` into int":         `line 4: "x" is text, but a whole number is expected here`,
		"line 5: cannot unmarshal !!seq into string":          `line 5: a list is given, but a single word or quoted text is expected here`,
		"line 6: cannot unmarshal !!str `x` into spec.Limits": `line 6: "x" is text, but a mapping of fields is expected here`,
		"line 7: something else":                              `line 7: something else`,
	} {
		if got := TypeProblem(msg).String(); got != want {
			t.Errorf("%s: %s, want %s", msg, got, want)
		}
	}
}

// TestChecker: a problem lands on its field's line; NotOneOf suggests the closest value.
func TestChecker(t *testing.T) {
	n := node(t, "sec:\n  a: 1\n  b:\n    c: x\n")
	c := NewChecker(n, "sec")
	c.OneOf("sec.b.c", "autp", []string{"auto", "summary"})
	c.Add("sec", "whole")
	if got := c.Problems[0].String(); got != `line 4: sec.b.c: "autp" is not valid; did you mean "auto"? (valid: auto, summary)` {
		t.Error(got)
	}
	if c.Problems[1].Line != 3 && c.Problems[1].Line != 2 {
		t.Errorf("section line %d", c.Problems[1].Line)
	}
	if SafeText("a\x1b[2Jb") != `a\x1b[2Jb` || !Printable("plain") {
		t.Error("SafeText / Printable")
	}
}
