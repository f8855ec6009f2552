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

	"github.com/boxbench/boxbench/spec/section"
)

// Problem is one thing wrong with a spec (package section, so that a part that decodes a
// section of its own gives the same).
type Problem = section.Problem

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
	section.Lines(root.Content[0], "", e.lines)
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
	ops, omore := e.decodeOwn() // spec/own.go
	problems, more = append(problems, ops...), more+omore
	problems = append(problems, e.decodeSections()...) // spec/client.go
	vps, vmore := e.validate()
	problems, more = append(problems, vps...), more+vmore
	if problems = e.finish(problems); len(problems) > 0 || more > 0 {
		return nil, newError(file, problems, more)
	}
	return e, nil
}

// Line returns the line of a dotted field path, or 0.
func (e *Experiment) Line(path string) int { return e.lines[path] }

var (
	unknownRe  = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)
	sections   = sectionTypes()
	sectionFor = map[string]string{
		"spec.Experiment": "", "spec.Workload": "workload", "spec.Dataset": "dataset",
		"spec.Limits": "limits", "spec.Placement": "placement", "spec.StorageOptions": "storageOptions",
		"spec.BlockdevOptions": "storageOptions.blockdev", "spec.TmpfsOptions": "storageOptions.tmpfs",
		"spec.plain": "repetitions", "spec.Telemetry": "telemetry", "spec.Timeouts": "timeouts",
		"spec.Client": "client",
	}
)

// reflectExperiment is the type whose fields are the spec's own top-level keys.
var reflectExperiment = reflect.TypeOf(Experiment{})

func sectionTypes() map[string]reflect.Type {
	sections := map[string]reflect.Type{}
	for _, v := range []any{Experiment{}, Workload{}, Dataset{}, Limits{}, Placement{}, StorageOptions{},
		BlockdevOptions{}, TmpfsOptions{}, Repetitions{}, Telemetry{}, Timeouts{}, Client{}} {
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
		return section.Unknown(line, sectionFor[m[3]], m[2], section.Fields(sections[m[3]]))
	}
	return section.TypeProblem(msg)
}
