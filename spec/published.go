package spec

import (
	"fmt"
	"strings"

	"github.com/boxbench/boxbench/spec/section"
)

// published checks the published: block (package study's own rules) and the names its effects
// select cells by. A key or a value this matrix does not have is valid when it is one a matrix
// could have (a matrix key; a value the vocabulary knows, a neighbour the spec defines): a
// study cut to fewer cells keeps its block, and the effects outside the cut are reported as
// not measured (published.Effect.Unmeasured). Names no matrix could have are typing errors.
func (c *checker) published() {
	p := c.e.Published
	if p == nil {
		return
	}
	put := func(field, msg string) {
		line := c.e.lines[field]
		if line == 0 {
			line = c.e.lines["published"]
		}
		c.put(Problem{Line: line, Field: field, Message: msg})
	}
	for _, m := range p.Validate() {
		field, msg, _ := strings.Cut(m, ": ")
		put("published."+field, msg)
	}
	for i, e := range p.Effects {
		for _, sel := range []struct {
			name string
			m    map[string]string
		}{{"cells", e.Cells}, {"baseline", e.Baseline}} {
			for _, k := range sortedKeys(sel.m) {
				field := fmt.Sprintf("published.effects[%d].%s.%s", i, sel.name, k)
				if msg := c.publishedName(k, sel.m[k]); msg != "" {
					put(field, msg)
				}
			}
		}
	}
}

// publishedName says why k=v can be no cell of any matrix of this spec; "" when it can.
func (c *checker) publishedName(k, v string) string {
	if c.e.varies(k) && contains(c.e.ValuesOf(k), v) {
		return ""
	}
	if !contains(MatrixKeys, k) {
		msg := fmt.Sprintf("%q is not a matrix key (this matrix varies: %s; valid: %s)", k, strings.Join(c.e.Keys(), ", "), strings.Join(MatrixKeys, ", "))
		if s := section.Closest(k, MatrixKeys); s != "" {
			msg = fmt.Sprintf("%q is not a matrix key; did you mean %q? (this matrix varies: %s)", k, s, strings.Join(c.e.Keys(), ", "))
		}
		return msg
	}
	valid := c.e.Values(k)
	if k == "neighbour" {
		valid = append([]string{"none"}, SortedNeighbours(c.e)...)
	}
	if valid == nil || contains(valid, v) || (k == "storage" && parametric(valid, v)) {
		return ""
	}
	msg := fmt.Sprintf("%q is not a value of %s here or in any matrix (valid: %s)", v, k, strings.Join(valid, ", "))
	if s := section.Closest(v, valid); s != "" {
		msg = fmt.Sprintf("%q is not a value of %s here or in any matrix; did you mean %q? (valid: %s)", v, k, s, strings.Join(valid, ", "))
	}
	return msg
}
