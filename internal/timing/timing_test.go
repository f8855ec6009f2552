package timing

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// testdata/gotest.jsonl is `go test -json ./...` of a throwaway module (a passing, a failing
// with subtests, a skipped test; parallel subtests; a package without tests; one that does not
// build), captured with Go 1.26; testdata/gotest.plain is plain `go test ./...` of the same.
func TestStreamPrintsWhatPlainGoTestPrints(t *testing.T) {
	in, err := os.ReadFile("testdata/gotest.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out, raw bytes.Buffer
	results, err := Stream(bytes.NewReader(in), &out, &raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw.Bytes(), in) {
		t.Error("the raw copy differs from the input")
	}
	got := out.String()
	for _, want := range []string{
		"    a_test.go:12: broken here\n--- FAIL: TestFail/sub-bad",
		"--- FAIL: TestFail (",
		"FAIL\texample.com/fix/a\t",
		"ok  \texample.com/fix/b\t",
		"?   \texample.com/fix/c\t[no test files]\n",
		"d/d_test.go:5:28: undefined: undefined\n",
		"FAIL\texample.com/fix/d [build failed]\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, hidden := range []string{"hidden when passing", "=== RUN", "--- PASS", "no reason"} {
		if strings.Contains(got, hidden) {
			t.Errorf("output shows %q, which plain go test hides:\n%s", hidden, got)
		}
	}
	plain, err := os.ReadFile("testdata/gotest.plain")
	if err != nil {
		t.Fatal(err)
	}
	// Plain go test ends with one more "FAIL" of its own, which is no event of the stream (the
	// exit status says it).
	if n, m := strings.Count(got, "\n"), strings.Count(string(plain), "\n"); n != m-1 {
		t.Errorf("%d lines, plain go test printed %d + a final FAIL:\n%s", n, m-1, got)
	}
	byName := map[string]Result{}
	for _, r := range results {
		byName[r.Package+" "+r.Test] = r
	}
	for name, action := range map[string]string{
		"example.com/fix/a ":                 "fail",
		"example.com/fix/a TestPass":         "pass",
		"example.com/fix/a TestFail/sub-bad": "fail",
		"example.com/fix/a TestSkip":         "skip",
		"example.com/fix/b ":                 "pass",
		"example.com/fix/c ":                 "skip",
		"example.com/fix/d ":                 "fail",
	} {
		if byName[name].Action != action {
			t.Errorf("%s: %q, want %q", name, byName[name].Action, action)
		}
	}
	if e := byName["example.com/fix/a TestPass"].Elapsed; e != 300*time.Millisecond {
		t.Errorf("TestPass took %v, the stream says 0.3 s", e)
	}
}

// A stream cut off mid-test (go test killed by its -timeout or a signal) still shows what the
// unfinished test printed, and a line that is not JSON passes through.
func TestStreamCutShort(t *testing.T) {
	in := `go: downloading example.com/x v1.0.0
{"Action":"run","Package":"p","Test":"TestHang"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"    hang_test.go:9: waiting for the guest\n"}
{"Action":"out`
	var out bytes.Buffer
	if _, err := Stream(strings.NewReader(in), &out, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go: downloading example.com/x v1.0.0\n", "no end recorded: p TestHang\n    hang_test.go:9: waiting", `{"Action":"out`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestParsePhases(t *testing.T) {
	log := "# timing log of a run\n" +
		"1764201600.25\t12.5\t0\tsetup/apt\n" +
		"1764201600.5\t300\t0\tsetup/runsc\t412.5\n" +
		"1764201600.5\t300\t0\tsetup/x\tnot-seconds\n" +
		"garbage\n" +
		"1764201900\t2.0\t1\ttest/images\n" +
		"1764201950\t1" // torn by a kill
	ph, skipped, err := ParsePhases(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(ph) != 3 || skipped != 3 {
		t.Fatalf("%d phases, %d skipped: %+v", len(ph), skipped, ph)
	}
	if ph[0].Name != "setup/apt" || ph[0].Wall != 12500*time.Millisecond || ph[0].Start.UnixMilli() != 1764201600250 {
		t.Errorf("first phase %+v", ph[0])
	}
	if ph[2].Exit != 1 {
		t.Errorf("a failed phase reads as exit %d", ph[2].Exit)
	}
	if ph[0].CPU >= 0 || ph[1].CPU != 412500*time.Millisecond {
		t.Errorf("cpu: a four-field line reads as %v (want unrecorded), a five-field one as %v", ph[0].CPU, ph[1].CPU)
	}
}

func TestReportOrdersAndMarks(t *testing.T) {
	t0 := time.Unix(1764201600, 0)
	rep := Report{
		Phases: []Phase{
			{Name: "test/kube-build", Start: t0.Add(5 * time.Minute), Wall: 9 * time.Minute, CPU: 17 * time.Minute},
			{Name: "setup/apt", Start: t0, Wall: 150 * time.Second, CPU: -1},
			{Name: "test/images", Start: t0.Add(5 * time.Minute), Wall: 4 * time.Minute, Exit: 1, CPU: 90 * time.Second},
		},
		Results: []Result{
			{Package: "m/e2e", Action: "fail", Elapsed: 40 * time.Minute},
			{Package: "m/stats", Action: "pass", Elapsed: 2 * time.Second},
			{Package: "m/none", Action: "skip"},
			{Package: "m/e2e", Test: "TestFault", Action: "pass", Elapsed: 25 * time.Second},
			{Package: "m/e2e", Test: "TestQuick", Action: "pass", Elapsed: 3 * time.Second},
		},
		Slow:   20 * time.Second,
		Module: "m",
	}
	var b bytes.Buffer
	rep.Write(&b)
	got := b.String()
	for _, want := range []string{
		"setup/apt           +0.0s      2m30s          -  ok\n",
		"test/images        +5m00s      4m00s      90.0s  FAILED (exit 1)\n",
		"test/kube-build    +5m00s      9m00s     17m00s  ok\n",
		"all phases                    14m00s",
		"  e2e       40m00s  FAIL\n  stats       2.0s\n",
		"  e2e TestFault      25.0s\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestQuick") || strings.Contains(got, "none") {
		t.Errorf("report lists a fast test or a package without tests:\n%s", got)
	}
	if strings.Index(got, "setup/apt") > strings.Index(got, "test/kube-build") {
		t.Errorf("phases not in the order they started:\n%s", got)
	}
}
