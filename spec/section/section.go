// Package section decodes a top-level section of a spec that a part other than package spec
// owns (a platform's own settings, platform.Settings) with the problems spec gives for its own
// sections: each on its line, naming the dotted field, the value and what is valid, all at
// once. It sits below spec and the platforms so that both can use it (a platform cannot import
// spec's consumers, and spec must not know a platform's fields).
package section

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Problem is one thing wrong with a spec.
type Problem struct {
	Line    int    // 0 when the problem has no single place (e.g. a missing field)
	Field   string // dotted path, e.g. "workload.threads"
	Message string
}

func (p Problem) String() string {
	loc := ""
	if p.Line > 0 {
		loc = fmt.Sprintf("line %d: ", p.Line)
	}
	if p.Field != "" {
		return loc + p.Field + ": " + p.Message
	}
	return loc + p.Message
}

// Decode decodes n (the value of the spec's key path) into v, a pointer to a struct with yaml
// tags, as strictly as spec decodes its own sections: a key v's type does not have is a
// problem naming the closest valid one and all of them, a value of the wrong type one saying
// what is expected. A nil n leaves v alone. The spec's shape and safety checks (depth, tags,
// anchors, control characters) have run over n already.
func Decode(n *yaml.Node, path string, v any) []Problem {
	if n == nil {
		return nil
	}
	ps := unknownKeys(n, path, reflect.TypeOf(v).Elem())
	if err := n.Decode(v); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return append(ps, Problem{Line: n.Line, Field: path, Message: err.Error()})
		}
		// A type error has only its line and the value: the field is the key holding that
		// value on that line.
		fields := map[lineValue]string{}
		valueFields(n, path, fields)
		for _, msg := range te.Errors {
			p := TypeProblem(msg)
			v := ""
			if q, err := strconv.QuotedPrefix(p.Message); err == nil {
				v, _ = strconv.Unquote(q)
			}
			p.Field = fields[lineValue{p.Line, v}]
			ps = append(ps, p)
		}
	}
	return ps
}

type lineValue struct {
	line  int
	value string // "" for a list or a mapping
}

// valueFields records the dotted path of every value under mapping n by its line and text.
func valueFields(n *yaml.Node, path string, into map[lineValue]string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := path + "." + k.Value
		if v.Kind == yaml.ScalarNode {
			into[lineValue{v.Line, v.Value}] = p
		} else {
			into[lineValue{v.Line, ""}] = p
		}
		valueFields(v, p, into)
	}
}

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// unknownKeys finds the keys of mappings under n that type t has no field for (yaml.v3's
// Node.Decode has no known-fields mode).
func unknownKeys(n *yaml.Node, path string, t reflect.Type) []Problem {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind != yaml.MappingNode || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	var ps []Problem
	switch t.Kind() {
	case reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			ps = append(ps, unknownKeys(n.Content[i+1], path+"."+n.Content[i].Value, t.Elem())...)
		}
	case reflect.Struct:
		valid := Fields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			f, ok := fieldOf(t, k.Value)
			if !ok {
				ps = append(ps, Unknown(k.Line, path, k.Value, valid))
				continue
			}
			ps = append(ps, unknownKeys(n.Content[i+1], path+"."+k.Value, f.Type)...)
		}
	}
	return ps
}

func fieldOf(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag == key && tag != "-" {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// Fields are the yaml names of struct type t's fields, in order (inline and "-" fields left out).
func Fields(t reflect.Type) []string {
	if t == nil {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// Unknown is the problem of key name at line, in the mapping at dotted path section ("" at the
// top), where valid are the keys allowed.
func Unknown(line int, section, name string, valid []string) Problem {
	field := name
	if section != "" {
		field = section + "." + name
	}
	msg := fmt.Sprintf("unknown field %q", name)
	if s := Closest(name, valid); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return Problem{Line: line, Field: field, Message: msg + "; valid here: " + strings.Join(valid, ", ")}
}

var (
	unmarshRe = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+) (?:`(.*)` )?into (\\S+)$")
	lineRe    = regexp.MustCompile(`^line (\d+): (.*)$`)
)

// TypeProblem turns one of yaml.v3's Go-flavoured type errors ("line 5: cannot unmarshal !!str
// `many` into int") into the spec's words; the field is left for the caller to name.
func TypeProblem(msg string) Problem {
	if m := unmarshRe.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		want := map[string]string{"int": "a whole number", "int64": "a whole number", "float64": "a number",
			"bool": "true or false", "string": "a single word or quoted text"}[m[4]]
		if want == "" {
			want = "a " + strings.TrimPrefix(strings.TrimPrefix(m[4], "map["), "[]") + " value"
			if strings.HasPrefix(m[4], "map[") || strings.Contains(m[4], ".") {
				want = "a mapping of fields" // a map or a named struct of some package
			}
		}
		if m[3] == "" && m[2] != "str" { // yaml.v3 quotes no value of a list or a mapping
			return Problem{Line: line, Message: fmt.Sprintf("%s is given, but %s is expected here", article(m[2]), want)}
		}
		return Problem{Line: line, Message: fmt.Sprintf("%q is %s, but %s is expected here", m[3], article(m[2]), want)}
	}
	if m := lineRe.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Problem{Line: line, Message: m[2]}
	}
	return Problem{Message: msg}
}

func article(tag string) string {
	switch tag {
	case "str":
		return "text"
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "int", "float":
		return "a number"
	}
	return tag
}
