package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHostileSpecsBinary runs the real binary (plan and run, as the user running it: root on a
// bench host) on hostile specs aimed at a canary file outside the work root. Each must exit
// with the usage status and a message naming the field, leave the canary as it was, claim no
// --out directory and print no raw control character.
func TestHostileSpecsBinary(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	if err := os.WriteFile(canary, []byte("untouched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(canary, old, old); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	up := strings.Repeat("../", 12) + strings.TrimPrefix(canary, "/")
	head := "apiVersion: boxbench/v1alpha1\nkind: Experiment\nname: hostile\ndbms: postgresql\ndataset: {records: 1000}\nlimits: {cpus: 1, memory: 1GiB}\nrepetitions: 1\n"
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"neighbour traversal", "workload: {type: ycsb, duration: 2s}\nneighbours:\n  \"" + up + "\": {workload: {type: stress, cpu: 1}}\nmatrix: {platform: [native], neighbour: [none, \"" + up + "\"]}\n",
			[]string{`neighbours: "` + up + `" is not a valid neighbour name`, "matrix.neighbour"}},
		{"workload traversal", "workloads:\n  \"" + up + "\": {type: ycsb, duration: 2s}\nmatrix: {platform: [native], workload: [\"" + up + "\"]}\n",
			[]string{`workloads: "` + up + `" is not a valid workload name`}},
		{"fio exec", "workload: {type: fio, duration: 2s, job: {rw: write, ioengine: exec, program: /bin/sh, arguments: \"-c 'echo pwned > " + canary + "'\"}}\nmatrix: {platform: [native]}\n",
			[]string{`workload.job.ioengine: "exec" is invalid`, "workload.job.program: is not an allowed fio option", "workload.job.arguments: is not an allowed fio option"}},
		{"device is the canary", "workload: {type: ycsb, duration: 2s}\nstorageOptions: {blockdev: {device: " + canary + "}}\nmatrix: {platform: [native], storage: [blockdev]}\n",
			[]string{`storageOptions.blockdev.device: "` + canary + `" is not a device path`}},
		{"device option", "workload: {type: ycsb, duration: 2s}\nstorageOptions: {blockdev: {device: -F}}\nmatrix: {platform: [native], storage: [blockdev]}\n",
			[]string{`storageOptions.blockdev.device: "-F" is not a device path`}},
		{"escape sequences", "description: \"\\e[2J\\e]0;owned\\a\"\nworkload: {type: ycsb, duration: 2s}\nmatrix: {platform: [native], runtime: [\"runc\\e[31m\"]}\n",
			[]string{`description: "\x1b[2J\x1b]0;owned\a" holds the control character U+001B`, `matrix.runtime: "runc\x1b[31m"`}},
		{"workload the generator refuses", "workload: {type: ycsb, duration: 2s, proportions: {read: 2}}\nmatrix: {platform: [native]}\n",
			[]string{"workload.proportions.read: 2 is invalid"}},
		{"alias", "workload: &w {type: ycsb, duration: 2s}\nplacement: *w\nmatrix: {platform: [native]}\n",
			[]string{"workload: anchor &w", "placement: alias *w"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specFile := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(specFile, []byte(head+tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
			for _, args := range [][]string{
				{"--work-root", work, "plan", specFile},
				{"--work-root", work, "run", "--out", out, specFile},
			} {
				cmd := exec.Command(bin, args...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != ExitUsage {
					t.Errorf("%s: exit %v, want status %d\nstderr: %s", args[2], err, ExitUsage, stderr.String())
				}
				text := stdout.String() + stderr.String()
				for _, w := range tc.want {
					if !strings.Contains(text, w) {
						t.Errorf("%s: missing %q in:\n%s", args[2], w, text)
					}
				}
				if strings.ContainsAny(text, "\x1b\a") {
					t.Errorf("%s: a raw control character reached the terminal: %q", args[2], text)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("run claimed --out %s for a spec that failed validation", out)
			}
			b, err := os.ReadFile(canary)
			fi, _ := os.Stat(canary)
			if err != nil || string(b) != "untouched\n" || !fi.ModTime().Equal(old) {
				t.Fatalf("the canary was touched: %q %v", b, err)
			}
		})
	}
	if entries, _ := os.ReadDir(work); len(entries) > 0 {
		t.Errorf("the work root holds %d entries after refused specs", len(entries))
	}
}
