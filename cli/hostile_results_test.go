package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/boxbench/boxbench/spec/section"
)

// evil is what a hostile results file puts in its strings: a window title (OSC ... BEL), clear
// screen and cursor home, an 8-bit CSI (C1), bidirectional override and isolate, DEL, a
// carriage return and an invalid UTF-8 byte.
const evil = "<script>alert(1)</script>\x1b]0;owned\a\x1b[2J\x1b[H\u009b31m\u202e\u2066\x7f\r\xff"

// rawControl returns the first character of s that must not reach a terminal (new lines and
// tabs are layout).
func rawControl(s string) (string, bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (r != '\n' && r != '\t' && section.ControlChar(r)) {
			return s[max(0, i-20):min(len(s), i+20)], true
		}
		i += size
	}
	return "", false
}

// TestResultsStringsReachTheTerminalEscaped: every string of a results file (cell ids and
// params, run ids, reasons, log tails, warnings, facts, env, events, metric names and labels)
// reaches stdout and stderr of results, report and compare, in every format, with its control
// characters escaped; JSON output stays JSON.
func TestResultsStringsReachTheTerminalEscaped(t *testing.T) {
	dir := writeResFix(t, resFix{evil: evil})
	other := writeResFix(t, resFix{evil: evil})
	run := "platform=native" + evil + "#1"
	html := filepath.Join(t.TempDir(), "r.html")
	for _, args := range [][]string{
		{"results", dir}, {"results", "--format", "json", dir}, {"results", "--format", "csv", dir},
		{"results", "--run", run, dir},
		{"results", "--series", "--run", run, dir}, {"results", "--series", "--format", "json", "--run", run, dir},
		{"results", "--series", "--format", "csv", "--run", run, dir},
		{"results", "--run", "nope" + evil, dir},
		{"report", dir}, {"report", "--format", "json", dir}, {"report", "--format", "csv", dir},
		{"report", "--format", "sweep-csv", dir}, {"report", "--html", html, dir},
		{"compare", dir, other}, {"compare", "--format", "json", dir, other},
	} {
		t.Run(strings.Join(args[:min(len(args)-1, 3)], " "), func(t *testing.T) {
			code, out, errs := runMain(t, args...)
			if code != 0 && !strings.Contains(args[len(args)-2], "nope") {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			for name, s := range map[string]string{"stdout": out, "stderr": errs} {
				if at, bad := rawControl(s); bad {
					t.Errorf("%s holds a raw control character near %q", name, at)
				}
			}
			if slices.Contains(args, "json") && !json.Valid([]byte(out)) {
				t.Errorf("the JSON output is not JSON:\n%s", out)
			}
			if !slices.Contains(args, "sweep-csv") && !strings.Contains(out+errs, `\x1b]0;owned`) && !strings.Contains(out+errs, `\u001b]0;owned`) {
				t.Errorf("the escaped form is not in the output:\n%s\n%s", out, errs)
			}
		})
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "<script>alert") {
		t.Error("the HTML page holds a results file's markup unescaped")
	}
}
