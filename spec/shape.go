package spec

// The shape of a spec's YAML tree, checked before anything is decoded so that parsing and
// validation stay linear in the file's size (issue 32): yaml.v3 compares every pair of keys of
// a mapping (n²/2 work, and a problem per equal pair: a key repeated a few thousand times made
// gigabytes of messages), so a mapping's keys are counted and their duplicates found here, in
// one pass, and a spec with either is refused before the decoder sees it. Depth, list length,
// key and value length are bounded the same way: no valid spec comes near any of them, and
// each bound keeps the field paths, messages and loops over the tree small.

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

const (
	// MaxMappingKeys bounds the keys of one mapping (workloads:, a fio job, …).
	MaxMappingKeys = 256
	// MaxListItems bounds one list (matrix values, exclude entries).
	MaxListItems = 10000
	// MaxDepth bounds nesting (the deepest field, workloads.<name>.job.<option>, is at 4).
	MaxDepth = 16
	// MaxScalarBytes bounds a key or value; the description may hold MaxDescriptionBytes.
	MaxScalarBytes      = 4096
	MaxDescriptionBytes = 64 << 10
	// MaxProblems is the number of problems reported; the rest are counted.
	MaxProblems = 100
)

// shape returns the problems of the tree's shape; when there are any the spec is not decoded.
func shape(root *yaml.Node) []Problem {
	var ps []Problem
	var walk func(n *yaml.Node, field string, depth int)
	walk = func(n *yaml.Node, field string, depth int) {
		if len(ps) > MaxProblems {
			return
		}
		if depth > MaxDepth {
			ps = append(ps, Problem{Line: n.Line, Field: field, Message: fmt.Sprintf("nested more than %d levels deep (valid: the fields of docs/spec.md, at most %d levels)", MaxDepth, MaxDepth)})
			return
		}
		if n.Style&yaml.TaggedStyle != 0 {
			// !!binary decodes to bytes that escape the printable check; !!str, !!int, custom
			// tags change what a value means behind its text.
			ps = append(ps, Problem{Line: n.Line, Field: field, Message: fmt.Sprintf("explicit YAML tag %s is not supported (valid: plain or quoted values)", quoteCut(n.Tag))})
		}
		switch n.Kind {
		case yaml.ScalarNode:
			limit := MaxScalarBytes
			if field == "description" {
				limit = MaxDescriptionBytes
			}
			if len(n.Value) > limit {
				ps = append(ps, Problem{Line: n.Line, Field: field, Message: fmt.Sprintf("%s is %d bytes long (valid: at most %d)", quoteCut(n.Value), len(n.Value), limit)})
			}
		case yaml.MappingNode:
			if k := len(n.Content) / 2; k > MaxMappingKeys {
				ps = append(ps, Problem{Line: n.Line, Field: field, Message: fmt.Sprintf("has %d keys (valid: at most %d)", k, MaxMappingKeys)})
				return
			}
			first := make(map[string]int, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind == yaml.ScalarNode && len(k.Value) > MaxScalarBytes {
					walk(k, field, depth+1)
					continue
				}
				if line, dup := first[k.Value]; dup && k.Kind == yaml.ScalarNode {
					ps = append(ps, Problem{Line: k.Line, Field: joinField(field, k.Value), Message: fmt.Sprintf("key %s is already defined at line %d (valid: each key once)", quoteCut(k.Value), line)})
					continue
				}
				first[k.Value] = k.Line
				walk(k, field, depth+1)
				walk(v, joinField(field, k.Value), depth+1)
			}
		case yaml.SequenceNode:
			if len(n.Content) > MaxListItems {
				ps = append(ps, Problem{Line: n.Line, Field: field, Message: fmt.Sprintf("has %d items (valid: at most %d)", len(n.Content), MaxListItems)})
				return
			}
			for _, c := range n.Content {
				walk(c, field, depth+1)
			}
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, field, depth)
			}
		}
	}
	walk(root, "", 0)
	return ps
}

// quoteCut quotes s with Go escapes, cut to 40 characters with what was left out said: a
// message never carries a megabyte, nor a cut value that reads like the whole one.
func quoteCut(s string) string {
	const keep = 40
	if len(s) <= keep+10 {
		return fmt.Sprintf("%q", s)
	}
	cut := keep
	for cut > 0 && cut < len(s) && !utf8RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes in all)", s[:cut], len(s))
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// ShapeProblems returns the problems of a YAML tree's shape (the bounds above), for a reader of
// a spec stored elsewhere (a results file's) that must decode it in linear time too.
func ShapeProblems(root *yaml.Node) []Problem { return shape(root) }
