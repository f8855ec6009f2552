package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/hostenv"
	"github.com/boxbench/boxbench/report"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/workload"
)

// boxbench runs Main in this process, bounded by 30 s: what a refusal must take at most.
func boxbench(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Main(context.Background(), args, &out, &errb) }()
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("boxbench %v did not return within 30 s", args)
	}
	if strings.Contains(errb.String(), "goroutine ") || strings.Contains(errb.String(), "panic:") {
		t.Errorf("boxbench %v printed a stack trace:\n%s", args, errb.String())
	}
	return code, out.String(), errb.String()
}

// calibrationResults stores, in dir, an A/A experiment (two replicas of one configuration)
// recorded on this host: the results a report would once have kept as this host's calibration.
func calibrationResults(t *testing.T, dir string) {
	t.Helper()
	st, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	env, _ := json.Marshal(hostenv.Capture())
	if err := st.SetMeta(map[string]string{"experiment_id": "planted-1a2b3c4d", "name": "planted", "seed": "1",
		"created_at": time.Now().UTC().Format(time.RFC3339), "env": string(env), "schema_version": results.SchemaVersion}); err != nil {
		t.Fatal(err)
	}
	cells := []results.CellRecord{{ID: "replica=a", Params: map[string]string{"replica": "a"}, BaselineID: "replica=a"},
		{ID: "replica=b", Params: map[string]string{"replica": "b"}, BaselineID: "replica=a"}}
	if err := st.PutCells(cells); err != nil {
		t.Fatal(err)
	}
	seq := 0
	for rep := 1; rep <= 4; rep++ {
		for i, c := range cells {
			seq++
			thr := 1000 * (1 + 0.02*float64((rep+i)%3))
			now := time.Now()
			if err := st.PutRun(context.Background(), &results.RunRecord{ID: fmt.Sprintf("%s#%d", c.ID, rep), CellID: c.ID,
				Rep: rep, Seq: seq, Status: "ok", Started: now, Ended: now, Env: hostenv.Capture(),
				Result: &workload.Result{Measured: time.Second, Ops: []workload.OpSummary{{Op: "read", Series: "latency", Count: int64(thr), Throughput: thr}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// report, results and compare on a results.db that is a link, a FIFO or a device: refused
// at once (exit 64), the link's target unchanged.
func TestReadingCommandsRefuseNotRegular(t *testing.T) {
	base := t.TempDir()
	check := testenv.Canary(t, filepath.Join(base, "canary"))
	real := filepath.Join(base, "real")
	calibrationResults(t, real)
	kinds := map[string]func(string) error{
		"a symbolic link":               func(p string) error { return os.Symlink(filepath.Join(base, "canary"), p) },
		"a symbolic link to results.db": func(p string) error { return os.Symlink(filepath.Join(real, results.FileName), p) },
		"a FIFO":                        func(p string) error { return unix.Mkfifo(p, 0o644) },
	}
	if os.Geteuid() == 0 {
		kinds["a character device"] = func(p string) error { return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))) }
	}
	work := filepath.Join(base, "work")
	for kind, mk := range kinds {
		dir := filepath.Join(base, strings.ReplaceAll(kind, " ", "-"))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := mk(filepath.Join(dir, results.FileName)); err != nil {
			t.Fatal(err)
		}
		want := results.FileName + " is " + strings.TrimSuffix(kind, " to results.db")
		for _, args := range [][]string{{"report", dir}, {"results", dir}, {"compare", dir, real}, {"compare", real, dir},
			{"report", "--html", filepath.Join(base, "r.html"), dir}} {
			code, _, stderr := boxbench(t, append([]string{"--work-root", work}, args...)...)
			if code != ExitUsage || !strings.Contains(stderr, want) {
				t.Errorf("%s: %v: exit %d, stderr %q; want %d and %q", kind, args, code, stderr, ExitUsage, want)
			}
		}
	}
	check()
	if _, err := os.Lstat(filepath.Join(base, "r.html")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused report wrote its HTML: %v", err)
	}
}

// report --html FILE with a link planted at FILE.tmp writes FILE and leaves the link's target
// alone; a FILE that is a link or not a regular file is refused, nothing written.
func TestReportHTMLNeverFollows(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "exp")
	calibrationResults(t, dir)
	check := testenv.Canary(t, filepath.Join(base, "canary"))
	html := filepath.Join(base, "report.html")
	if err := os.Symlink(filepath.Join(base, "canary"), html+".tmp"); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	code, _, stderr := boxbench(t, "--work-root", work, "report", "--html", html, dir)
	if code != ExitOK {
		t.Fatalf("report --html: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !bytes.Contains(b, []byte("<html")) {
		t.Errorf("report.html: %v, %.40q", err, b)
	}
	if fi, err := os.Lstat(html + ".tmp"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted link was touched: %v", err)
	}
	linked := filepath.Join(base, "linked.html")
	if err := os.Symlink(filepath.Join(base, "canary"), linked); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(base, "fifo.html")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{linked: "linked.html is a symbolic link", fifo: "fifo.html is a FIFO"} {
		code, _, stderr = boxbench(t, "--work-root", work, "report", "--html", file, dir)
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("--html %s: exit %d, %q; want %d and %q", file, code, stderr, ExitUsage, want)
		}
	}
	// A boxbench report is replaced; another's file, or a file in a system directory, is not.
	if code, _, stderr = boxbench(t, "--work-root", work, "report", "--html", html, dir); code != ExitOK {
		t.Errorf("replacing a report: exit %d: %s", code, stderr)
	}
	notes := filepath.Join(base, "notes.html")
	checkNotes := testenv.Canary(t, notes)
	for file, want := range map[string]string{notes: "notes.html exists and is not a boxbench report", "/etc/boxbench-test-report.html": "system directory /etc"} {
		code, _, stderr = boxbench(t, "--work-root", work, "report", "--html", file, dir)
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("--html %s: exit %d, %q; want %d and %q", file, code, stderr, ExitUsage, want)
		}
	}
	checkNotes()
	if _, err := os.Lstat("/etc/boxbench-test-report.html"); err == nil {
		t.Error("a report was written in /etc")
	}
	check()
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// report on results recorded on this host, with an A/A calibration in them, writes no
// calibration: reading commands write no host state, so the next plan has no planted figures.
func TestReportKeepsNoCalibration(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "exp")
	calibrationResults(t, dir)
	// The control: these results hold a calibration of this host, which report once kept.
	st, err := results.OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Build(st)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := r.Stored(); !ok || !s.SameHost(hostenv.Capture()) {
		t.Fatalf("the fixture holds no calibration of this host: %+v %v", s, ok)
	}
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		if code, _, stderr := boxbench(t, "--work-root", work, "report", "--format", format, dir); code != ExitOK {
			t.Fatalf("report: exit %d: %s", code, stderr)
		}
	}
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Errorf("report wrote under the work root: %v", ents)
	}
}

const tinySpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: tiny
dbms: redis
workload: {type: ycsb, mix: a, threads: 1, duration: 1s, warmup: 0s}
dataset: {records: 100}
repetitions: 1
matrix: {platform: [native]}
`

// run --out refuses /, /etc, a link to /etc, a path with "..", another program's directory and
// one another boxbench holds, a FIFO as results.db and a directory inside the work root, before
// it creates anything (exit 64; 1 for the one in use). With --resume, which opens what it finds.
func TestRunOutRefused(t *testing.T) {
	base := t.TempDir()
	specFile := filepath.Join(base, "tiny.yaml")
	if err := os.WriteFile(specFile, []byte(tinySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/", "/etc"} {
		for _, n := range []string{results.FileName, results.MarkerName} {
			if _, err := os.Lstat(filepath.Join(d, n)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s/%s exists before the test: %v", d, n, err)
			}
		}
	}
	etcLink := filepath.Join(base, "etc-link")
	if err := os.Symlink("/etc", etcLink); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(base, "foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	checkForeign := testenv.Canary(t, filepath.Join(foreign, "report.html"))
	held := filepath.Join(base, "held")
	o, err := results.Claim(held, "other")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	fifoDir := filepath.Join(base, "fifo")
	if err := os.Mkdir(fifoDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(fifoDir, results.FileName), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	for _, tc := range []struct {
		out  string
		code int
		want string
	}{
		{fifoDir, ExitUsage, "results.db is a FIFO"},
		{filepath.Join(work, "out"), ExitUsage, "the work root, whose directories boxbench removes"},
		{"/", ExitUsage, "is the system directory /"},
		{"/etc", ExitUsage, "is the system directory /etc"},
		{etcLink, ExitUsage, "is a symbolic link (to /etc)"},
		{base + "/a/ghost/../dd", ExitUsage, `has a ".." component`},
		{foreign, ExitUsage, "holds files boxbench did not write (report.html)"},
		{held, ExitFailure, fmt.Sprintf("is in use by another boxbench (pid %d", os.Getpid())},
	} {
		code, _, stderr := boxbench(t, "--work-root", work, "-q", "run", "--resume", "--out", tc.out, specFile)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("--out %s: exit %d, %q; want %d and %q", tc.out, code, stderr, tc.code, tc.want)
		}
	}
	for _, d := range []string{"/", "/etc", foreign, held} {
		if _, err := os.Lstat(filepath.Join(d, results.FileName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/%s was created: %v", d, results.FileName, err)
		}
	}
	for _, d := range []string{"/", "/etc", foreign, fifoDir} {
		if _, err := os.Lstat(filepath.Join(d, results.MarkerName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s/%s was created: %v", d, results.MarkerName, err)
		}
	}
	for _, p := range []string{filepath.Join(base, "a"), filepath.Join(base, "dd"), "/etc/results.db", filepath.Join(work, "out")} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was created: %v", p, err)
		}
	}
	checkForeign()
	if ents, _ := os.ReadDir(foreign); len(ents) != 1 {
		t.Errorf("the foreign directory holds %v", ents)
	}
}
