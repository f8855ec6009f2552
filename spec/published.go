package spec

import (
	"fmt"
	"strings"
)

// published checks the published: block (package study's own rules) and that every effect
// selects cells this matrix has: a key it varies, a value it gives that key.
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
				values := c.e.ValuesOf(k)
				switch {
				case !c.e.varies(k):
					put(field, fmt.Sprintf("the matrix does not vary %s (it varies: %s)", k, strings.Join(c.e.Keys(), ", ")))
				case !contains(values, sel.m[k]):
					put(field, fmt.Sprintf("%q is not a value of matrix %s (valid: %s)", sel.m[k], k, strings.Join(values, ", ")))
				}
			}
		}
	}
}
