package timing

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events (Go 1.24+)
	Test       string
	Elapsed    float64 // seconds
	Output     string
}

// Result is the wall time and outcome of a package's test binary or of one test.
type Result struct {
	Package string
	Test    string // "" for the package
	Action  string // pass, fail or skip
	Elapsed time.Duration
}

// Stream reads `go test -json` from r, writes what a plain `go test ./...` would have printed
// to out (each passing package's "ok" line; a failing package's failed tests and its own
// output; build output; any line that is not an event, as it is) and returns the result of
// every package and test. Nothing of a passing test is printed: a 45-minute suite's log stays
// readable. raw, when not nil, gets every line unchanged (the record the report is made from).
func Stream(r io.Reader, out, raw io.Writer) ([]Result, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), 16<<20)
	pkgOut := map[string][]string{}  // package → its own output (no test)
	testOut := map[string][]string{} // package + "\x00" + test → the test's output
	var results []Result
	for s.Scan() {
		line := s.Bytes()
		if raw != nil {
			raw.Write(line)
			raw.Write([]byte{'\n'})
		}
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "build-output":
			io.WriteString(out, e.Output)
		case "output":
			if e.Test == "" {
				pkgOut[e.Package] = append(pkgOut[e.Package], e.Output)
			} else if !strings.HasPrefix(e.Output, "=== ") { // RUN, PAUSE, CONT, NAME: -v's framing
				testOut[key] = append(testOut[key], e.Output)
			}
		case "pass", "fail", "skip":
			results = append(results, Result{Package: e.Package, Test: e.Test, Action: e.Action,
				Elapsed: time.Duration(e.Elapsed * float64(time.Second))})
			if e.Test != "" {
				if e.Action == "fail" {
					io.WriteString(out, strings.Join(testOut[key], ""))
				}
				delete(testOut, key)
				continue
			}
			for _, l := range pkgOut[e.Package] {
				if e.Action == "fail" || strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "?") {
					io.WriteString(out, l)
				}
			}
			delete(pkgOut, e.Package)
		}
	}
	// A stream cut short (go test killed) leaves tests without an end: what they printed is
	// the only clue, so it is shown.
	var left []string
	for k := range testOut {
		left = append(left, k)
	}
	sort.Strings(left)
	for _, k := range left {
		pkg, test, _ := strings.Cut(k, "\x00")
		fmt.Fprintf(out, "--- no end recorded: %s %s\n%s", pkg, test, strings.Join(testOut[k], ""))
	}
	return results, s.Err()
}

// ReadResults reads the results of a recorded `go test -json` stream without printing it.
func ReadResults(r io.Reader) ([]Result, error) { return Stream(r, io.Discard, nil) }
