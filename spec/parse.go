package spec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
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

// Error lists the problems found in a spec file: every one, up to MaxProblems, and how many
// more there were.
type Error struct {
	File     string
	Problems []Problem
	More     int // problems found beyond MaxProblems, not listed
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problem(s):", e.File, len(e.Problems)+e.More)
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n  and %d more", e.More)
	}
	return b.String()
}

// newError sorts problems by line and keeps the first MaxProblems; more counts any already
// left out.
func newError(file string, problems []Problem, more int) *Error {
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Line < problems[j].Line })
	if len(problems) > MaxProblems {
		more += len(problems) - MaxProblems
		problems = problems[:MaxProblems:MaxProblems]
	}
	return &Error{File: file, Problems: problems, More: more}
}

// Parse reads and validates a spec against the vocabulary of this build's parts (package
// builtin). The error, if any, is an *Error with every problem.
func Parse(data []byte, file string, v Vocabulary) (*Experiment, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{File: file, Problems: []Problem{{Message: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}}
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: file, Problems: []Problem{{Message: "the file is empty; see examples/quickstart.yaml"}}}
	}
	if ps := shape(&root); len(ps) > 0 { // spec/shape.go: nothing is decoded past these
		return nil, newError(file, ps, 0)
	}
	e := &Experiment{lines: map[string]int{}, vocab: v}
	collectLines(root.Content[0], "", e.lines)
	var problems []Problem
	problems = append(problems, e.yamlProblems(root.Content[0])...) // spec/safety.go
	more := 0
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(e); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, &Error{File: file, Problems: []Problem{{Message: err.Error()}}}
		}
		for i, msg := range te.Errors {
			if i >= MaxProblems { // rewriting costs a "did you mean" search each
				more = len(te.Errors) - i
				break
			}
			problems = append(problems, rewrite(msg))
		}
	}
	e.applyDefaults()
	vps, vmore := e.validate()
	problems, more = append(problems, vps...), more+vmore
	if problems = e.finish(problems); len(problems) > 0 || more > 0 {
		return nil, newError(file, problems, more)
	}
	return e, nil
}

// Line returns the line of a dotted field path, or 0.
func (e *Experiment) Line(path string) int { return e.lines[path] }

func collectLines(n *yaml.Node, prefix string, into map[string]int) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := n.Content[i].Value
		if prefix != "" {
			p = prefix + "." + p
		}
		into[p] = n.Content[i].Line
		collectLines(n.Content[i+1], p, into)
	}
}

var (
	unknownRe  = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)
	unmarshRe  = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")
	lineRe     = regexp.MustCompile(`^line (\d+): (.*)$`)
	sections   = sectionTypes()
	sectionFor = map[string]string{
		"spec.Experiment": "", "spec.Workload": "workload", "spec.Dataset": "dataset",
		"spec.Limits": "limits", "spec.Placement": "placement", "spec.StorageOptions": "storageOptions",
		"spec.BlockdevOptions": "storageOptions.blockdev", "spec.TmpfsOptions": "storageOptions.tmpfs",
		"spec.plain": "repetitions", "spec.Telemetry": "telemetry", "spec.Timeouts": "timeouts",
		"spec.Kubernetes": "kubernetes", "spec.Client": "client",
	}
)

func sectionTypes() map[string]reflect.Type {
	sections := map[string]reflect.Type{}
	for _, v := range []any{Experiment{}, Workload{}, Dataset{}, Limits{}, Placement{}, StorageOptions{},
		BlockdevOptions{}, TmpfsOptions{}, Repetitions{}, Telemetry{}, Timeouts{}, Kubernetes{}, Client{}} {
		t := reflect.TypeOf(v)
		sections[t.String()] = t
	}
	sections["spec.plain"] = reflect.TypeOf(Repetitions{})
	return sections
}

// rewrite turns yaml.v3's Go-flavoured messages into ones that name the spec's fields.
func rewrite(msg string) Problem {
	if m := unknownRe.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		section := sectionFor[m[3]]
		valid := yamlFields(sections[m[3]])
		field := m[2]
		if section != "" {
			field = section + "." + m[2]
		}
		msg := fmt.Sprintf("unknown field %q", m[2])
		if s := closest(m[2], valid); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return Problem{Line: line, Field: field, Message: msg + "; valid here: " + strings.Join(valid, ", ")}
	}
	if m := unmarshRe.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		want := map[string]string{"int": "a whole number", "int64": "a whole number", "float64": "a number",
			"bool": "true or false", "string": "a single word or quoted text"}[m[4]]
		if want == "" {
			want = "a " + strings.TrimPrefix(strings.TrimPrefix(m[4], "map["), "[]") + " value"
			if strings.HasPrefix(m[4], "map[") || strings.HasPrefix(m[4], "spec.") {
				want = "a mapping of fields"
			}
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

func yamlFields(t reflect.Type) []string {
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

// closest returns the candidate within edit distance 2 of s (case-insensitive), if any.
func closest(s string, candidates []string) string {
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
