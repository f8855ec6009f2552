package section

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Context is what a section's validation may know of the rest of the spec and of the build.
type Context struct {
	// DBMSs are the databases of this build (spec.Vocabulary.DBMSs), sorted.
	DBMSs []string
	// ClientPlatform and ClientNode are the spec's client: block, where the load generator
	// runs ("" platform: this host), validated by spec.
	ClientPlatform, ClientNode string
}

// Checker collects a section's validation problems, each on its field's line.
type Checker struct {
	lines    map[string]int
	Problems []Problem
}

// NewChecker checks the section n at dotted path (nil n: a section the spec leaves out).
func NewChecker(n *yaml.Node, path string) *Checker {
	c := &Checker{lines: map[string]int{}}
	if n != nil {
		c.lines[path] = n.Line
		Lines(n, path, c.lines)
	}
	return c
}

// Add is a problem of field (a dotted path from the spec's top), on its line.
func (c *Checker) Add(field, format string, a ...any) {
	c.Problems = append(c.Problems, Problem{Line: c.lines[field], Field: field, Message: fmt.Sprintf(format, a...)})
}

// OneOf adds a problem when v is not one of valid.
func (c *Checker) OneOf(field, v string, valid []string) {
	if msg := NotOneOf(v, valid); msg != "" {
		c.Add(field, "%s", msg)
	}
}

// NotOneOf says that v is not one of valid, with the closest one; "" when it is.
func NotOneOf(v string, valid []string) string {
	for _, x := range valid {
		if x == v {
			return ""
		}
	}
	if s := Closest(v, valid); s != "" {
		return fmt.Sprintf("%q is not valid; did you mean %q? (valid: %s)", v, s, strings.Join(valid, ", "))
	}
	return fmt.Sprintf("%q is not valid (valid: %s)", v, strings.Join(valid, ", "))
}

// Lines records the line of every key under mapping n by its dotted path below prefix.
func Lines(n *yaml.Node, prefix string, into map[string]int) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := n.Content[i].Value
		if prefix != "" {
			p = prefix + "." + p
		}
		into[p] = n.Content[i].Line
		Lines(n.Content[i+1], p, into)
	}
}

// Closest returns the candidate within edit distance 2 of s (case-insensitive), if any.
func Closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if len(s)-len(c) > 2 || len(c)-len(s) > 2 {
			continue // the distance is at least the difference in length: keeps the search linear
		}
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// ControlRune returns the first rune of s that must not reach a terminal: C0 and C1 control
// characters (escape sequences start with ESC or CSI), DEL, Unicode bidirectional overrides
// and invalid UTF-8.
func ControlRune(s string) (rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return r, true
			}
		}
		if ControlChar(r) {
			return r, true
		}
	}
	return 0, false
}

// ControlChar says whether r must not reach a terminal as itself: a C0 or C1 control
// character, DEL, or a Unicode bidirectional override or isolate (U+202A–U+202E,
// U+2066–U+2069), which reorder what a reader sees.
func ControlChar(r rune) bool {
	return unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Printable says whether s has no rune ControlRune refuses.
func Printable(s string) bool {
	_, bad := ControlRune(s)
	return !bad
}

// SafeText returns s, or s quoted with Go escapes when it holds a character that must not
// reach a terminal (ControlRune).
func SafeText(s string) string {
	if !Printable(s) {
		q := strconv.QuoteToASCII(s)
		return q[1 : len(q)-1]
	}
	return s
}
