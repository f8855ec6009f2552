package spec

import (
	"strconv"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/spec/section"
)

// hostileBase is a valid spec with neighbours, named workloads and a blockdev device slot, the
// starting point each hostile case edits.
const hostileBase = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: hostile
description: a spec from a colleague
dbms: postgresql
workloads:
  w1: {type: ycsb, mix: a, threads: 2, duration: 5s}
  w2: {type: fio, job: fsync-high, duration: 5s}
neighbours:
  n1: {workload: {type: fio, job: fsync-low}}
dataset: {records: 1000}
limits: {cpus: 1, memory: 1GiB}
matrix:
  workload: [w1, w2]
  platform: [native, docker]
  neighbour: [none, n1]
repetitions: 3
`

// TestHostileSpecs: every way a shared spec could make boxbench (running as root) touch what
// it must not, or flood a terminal, is refused at validation with the field, the value and
// what is valid. docs/security.md refers to this table.
func TestHostileSpecs(t *testing.T) {
	if _, err := Parse([]byte(hostileBase), "base.yaml", vocab); err != nil {
		t.Fatalf("the base spec must be valid: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(string) string
		want []string
	}{
		// Path traversal in every name.
		{"traversal in a neighbour name", r("  n1:", "  /../../../../tmp/x:"), []string{`neighbours: "/../../../../tmp/x" is not a valid neighbour name`}},
		{"traversal in a workload name", r("  w1:", "  ../../etc:"), []string{`workloads: "../../etc" is not a valid workload name`}},
		{"traversal in matrix.workload", r("workload: [w1, w2]", "workload: [w1, w2, ../w]"), []string{`matrix.workload: "../w" is not a valid workload name`}},
		{"traversal in matrix.neighbour", r("[none, n1]", "[none, n1, ../../x]"), []string{`matrix.neighbour: "../../x" is not a valid neighbour name`}},
		{"dot-dot as a neighbour", r("  n1:", "  ..:"), []string{`neighbours: ".." is not a valid neighbour name`}},
		{"dot as a workload", r("  w1:", "  .:"), []string{`workloads: "." is not a valid workload name`}},
		{"slash in a runtime", func(s string) string {
			return strings.Replace(s, "matrix:\n", "matrix:\n  runtime: [runc, /usr/bin/x]\n", 1)
		}, []string{`matrix.runtime: "/usr/bin/x" is not a valid runtime name`}},
		{"traversal in the experiment name", r("name: hostile", "name: ../../root"), []string{`name: "../../root" is not a valid name`}},
		{"traversal in a baseline value", func(s string) string { return s + "baseline: {neighbour: ../x}\n" }, []string{`baseline: neighbour="../x" is not a valid value`}},
		{"traversal in an exclude value", func(s string) string {
			return strings.Replace(s, "repetitions:", "  exclude: [{neighbour: ../x}]\nrepetitions:", 1)
		}, []string{`matrix.exclude: entry 1: neighbour="../x" is not a valid value`}},
		// Option injection.
		{"option as a neighbour name", r("  n1:", "  --privileged:"), []string{`neighbours: "--privileged" is not a valid neighbour name`}},
		{"option as a runtime", func(s string) string { return strings.Replace(s, "matrix:\n", "matrix:\n  runtime: [--rm]\n", 1) }, []string{`matrix.runtime: "--rm" is not a valid runtime name`}},
		{"option as a device", func(s string) string { return s + "storageOptions: {blockdev: {device: -F}}\n" }, []string{`storageOptions.blockdev.device: "-F" is not a device path`}},
		{"option as a name", r("name: hostile", "name: -rf"), []string{`name: "-rf" is not a valid name`}},
		// Newlines and escape sequences in every name and text.
		{"newline in a neighbour name", r("  n1:", `  "n1\nfake: line":`), []string{`"n1\nfake: line" holds the control character U+000A`, `neighbours: "n1\nfake: line" is not a valid neighbour name`}},
		{"ANSI escape in a workload name", r("  w1:", `  "w1\e[2J":`), []string{`"w1\x1b[2J" holds the control character U+001B`}},
		{"ANSI escape in the description", r("description: a spec from a colleague", `description: "ok\e]0;pwned\a"`), []string{`description: "ok\x1b]0;pwned\a" holds the control character U+001B`}},
		{"C1 CSI in a value", r("mix: a", `mix: "a\u009b2J"`), []string{`holds the control character U+009B`}},
		{"bidi override in the description", r("description: a spec from a colleague", `description: "abc\u202edcba"`), []string{`holds the control character U+202E`}},
		{"escape in a field name", r("dataset:", `"data\eset":`), []string{`holds the control character U+001B`}},
		// fio escape hatches, in workloads and neighbours.
		{"fio exec engine", r("job: fsync-high", "job: {rw: write, ioengine: exec, program: /usr/bin/id}"), []string{
			`workloads.w2.job.ioengine: "exec" is invalid`, `workloads.w2.job.program: is not an allowed fio option`}},
		{"fio external engine", r("job: fsync-low", "job: {rw: write, ioengine: 'external:/tmp/x.so'}"), []string{`neighbours.n1.workload.job.ioengine: "external:/tmp/x.so" is invalid`}},
		{"fio write_iolog", r("job: fsync-low", "job: {rw: write, write_iolog: /etc/cron.d/x}"), []string{`neighbours.n1.workload.job.write_iolog: is not an allowed fio option`}},
		{"fio read_iolog", r("job: fsync-high", "job: {rw: write, read_iolog: /etc/shadow}"), []string{`workloads.w2.job.read_iolog: is not an allowed fio option`}},
		{"fio replay_redirect", r("job: fsync-high", "job: {rw: write, replay_redirect: /dev/vda}"), []string{`workloads.w2.job.replay_redirect: is not an allowed fio option`}},
		{"fio filename", r("job: fsync-high", "job: {rw: write, filename: /dev/vda}"), []string{`workloads.w2.job.filename: is set by the box's data directory`}},
		{"fio exec_prerun", r("job: fsync-low", "job: {preset: fsync-low, exec_prerun: 'rm -rf /'}"), []string{`neighbours.n1.workload.job.exec_prerun: is not an allowed fio option`}},
		{"fio path in a value", r("job: fsync-high", "job: {rw: write, bs: ../../x}"), []string{`workloads.w2.job.bs: "../../x" is invalid`}},
		// Device misuse.
		{"relative device", func(s string) string { return s + "storageOptions: {blockdev: {device: sda}}\n" }, []string{`storageOptions.blockdev.device: "sda" is not a device path`}},
		{"device outside /dev", func(s string) string { return s + "storageOptions: {blockdev: {device: /etc/passwd}}\n" }, []string{`storageOptions.blockdev.device: "/etc/passwd" is not a device path`}},
		{"device traversal", func(s string) string { return s + "storageOptions: {blockdev: {device: /dev/../etc/passwd}}\n" }, []string{`storageOptions.blockdev.device: "/dev/../etc/passwd" is not a device path`}},
		{"wipe without device", func(s string) string { return s + "storageOptions: {blockdev: {wipe: true}}\n" }, []string{`storageOptions.blockdev.wipe: true applies to a named device only`}},
		// Huge matrices and absurd numbers.
		{"huge matrix", func(s string) string {
			vals := make([]string, 5000)
			for i := range vals {
				vals[i] = "r" + strconv.Itoa(i)
			}
			return strings.Replace(s, "matrix:\n", "matrix:\n  runtime: ["+strings.Join(vals, ", ")+"]\n", 1)
		}, []string{`matrix: 40000 cells × 3 repetitions = 120000 planned runs is over the cap of 10000`}},
		{"huge matrix with exclusions", func(s string) string {
			vals := make([]string, 2000)
			for i := range vals {
				vals[i] = "r" + strconv.Itoa(i)
			}
			return strings.Replace(s, "matrix:\n", "matrix:\n  runtime: ["+strings.Join(vals, ", ")+"]\n  exclude: [{platform: native}]\n", 1)
		}, []string{`matrix: 8000 cells × 3 repetitions = 24000 planned runs is over the cap of 10000`}},
		{"too huge to enumerate", func(s string) string {
			vals := make([]string, 5000)
			for i := range vals {
				vals[i] = "r" + strconv.Itoa(i)
			}
			return strings.Replace(s, "matrix:\n", "matrix:\n  runtime: ["+strings.Join(vals, ", ")+"]\n  replica: [a, b, c]\n  exclude: [{platform: native}]\n", 1)
		}, []string{`matrix: 120000 cells before exclusions × 3 repetitions = 360000 planned runs is over the cap of 10000`}},
		{"many repetitions", func(s string) string {
			return strings.Replace(strings.Replace(s, "repetitions: 3", "repetitions: {min: 2, max: 1000, targetCIHalfWidth: 1%}", 1), "matrix:\n", "matrix:\n  runtime: [runc, crun]\n", 1)
		}, []string{`matrix: 16 cells × 1000 repetitions = 16000 planned runs is over the cap of 10000`}},
		{"NaN cpus", r("cpus: 1", "cpus: .nan"), []string{`limits.cpus: ".nan" is not a finite number`}},
		{"Inf cpus", r("cpus: 1", "cpus: .inf"), []string{`limits.cpus: ".inf" is not a finite number`}},
		{"absurd cpus", r("cpus: 1", "cpus: 1e300"), []string{`limits.cpus: 1e+300 is out of range (valid: 0 to 4096)`}},
		{"NaN neighbour cpus", r("job: fsync-low}", "job: fsync-low}, limits: {cpus: -.inf}"), []string{`neighbours.n1.limits.cpus: "-.inf" is not a finite number`}},
		{"NaN percent", r("repetitions: 3", "repetitions: {min: 2, max: 5, targetCIHalfWidth: NaN}"), []string{`"NaN" is not a percentage`}},
		{"overflowing size", r("memory: 1GiB", "memory: 9999999TiB"), []string{`"9999999TiB" is too large`, `(field limits.memory)`}},
		{"overflowing byte count", r("memory: 1GiB", "memory: 99999999999999999999"), []string{`"99999999999999999999" is too large`}},
		{"overflowing records", r("records: 1000", "records: 99999999999999999999"), []string{`records`}},
		{"telemetry 1ns", func(s string) string { return s + "telemetry: {interval: 1ns}\n" }, []string{`telemetry.interval: 1ns is out of range (valid: 100ms to 1m0s)`}},
		{"workload interval 1ns", r("duration: 5s}", "duration: 5s, interval: 1ns}"), []string{`workloads.w1.interval: 1ns is too short`}},
		{"neighbour interval 1ns", r("job: fsync-low}", "job: fsync-low, interval: 1ns}"), []string{`neighbours.n1.workload.interval: 1ns is out of range`}},
		{"year-long duration", r("threads: 2, duration: 5s", "threads: 2, duration: 8760h"), []string{`workloads.w1.duration: 8760h0m0s is too long (valid: up to 24h0m0s)`}},
		// YAML aliases and merge keys.
		{"anchor and alias", r("limits: {cpus: 1, memory: 1GiB}", "limits: &l {cpus: 1, memory: 1GiB}\nplacement: *l"), []string{
			`limits: anchor &l: YAML anchors, aliases and merge keys are not supported`, `placement: alias *l`}},
		{"merge key", r("  w1: {type: ycsb, mix: a, threads: 2, duration: 5s}", "  w1: &base {type: ycsb, mix: a, threads: 2, duration: 5s}\n  w3:\n    <<: *base\n    threads: 4"), []string{
			`merge key <<: YAML anchors, aliases and merge keys are not supported`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.edit(hostileBase)
			if src == hostileBase {
				t.Fatal("the edit changed nothing")
			}
			_, err := Parse([]byte(src), "hostile.yaml", vocab)
			se, ok := err.(*Error)
			if !ok {
				t.Fatalf("accepted, or not a *spec.Error: %v", err)
			}
			text := se.Error()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			if _, bad := section.ControlRune(text); bad && strings.ContainsAny(text, "\x1b\a\u009b\u202e") {
				t.Errorf("a raw control character reaches the terminal: %q", text)
			}
		})
	}
}

// TestHostileAllAtOnce: several hostile edits in one file are all reported together.
func TestHostileAllAtOnce(t *testing.T) {
	src := strings.NewReplacer("  n1:", "  ../n1:", "cpus: 1", "cpus: .nan", "job: fsync-high", "job: {rw: write, ioengine: exec}").Replace(hostileBase) +
		"telemetry: {interval: 1ns}\nstorageOptions: {blockdev: {device: -F}}\n"
	_, err := Parse([]byte(src), "h.yaml", vocab)
	se, ok := err.(*Error)
	if !ok {
		t.Fatalf("got %v", err)
	}
	for _, w := range []string{`"../n1"`, `".nan"`, `"exec"`, "telemetry.interval", `"-F"`} {
		if !strings.Contains(se.Error(), w) {
			t.Errorf("missing %s in:\n%s", w, se.Error())
		}
	}
}

// TestCellCount: exclusions count exactly below the enumeration limit, and the cap is not
// reached by an ordinary matrix.
func TestCellCount(t *testing.T) {
	src := strings.Replace(hostileBase, "repetitions:", "  exclude: [{platform: native, neighbour: n1}, {workload: w2, platform: docker}]\nrepetitions:", 1)
	e, err := Parse([]byte(src), "c.yaml", vocab)
	if err != nil {
		t.Fatal(err)
	}
	// 2 × 2 × 2 = 8 cells; w1/native/n1, w2/native/n1 and w2/docker/{none,n1} are excluded.
	if n, exact := e.cellCount(); n != 4 || !exact {
		t.Errorf("cellCount = %d, %v; want 4, true", n, exact)
	}
}

// TestValidName: the rule every name follows.
func TestValidName(t *testing.T) {
	for _, ok := range []string{"a", "n1", "fsync-high", "io.containerd.kata.v2", "a_b", strings.Repeat("a", 63)} {
		if !ValidName(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", ".", "..", "-rf", "_a", "A", "a/b", "a b", "a\n", strings.Repeat("a", 64), "é"} {
		if ValidName(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
