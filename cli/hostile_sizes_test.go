package cli

import (
	"fmt"
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// seq is SQLite's 1..n, for fixtures of many rows written in one statement.
func seq(n int) string {
	return fmt.Sprintf("WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM seq WHERE n < %d) ", n)
}

// manyCells adds n cells (params key=v<i>, compared with the fixture's baseline) with one ok
// run each.
func manyCells(n int, key string) []string {
	return []string{
		seq(n) + `INSERT INTO cells SELECT '` + key + `=v'||n, json_object('` + key + `', 'v'||n), NULL, 'platform=native' FROM seq`,
		seq(n) + `INSERT INTO runs (id, cell_id, rep, seq, status, started_at, ended_at, throughput_ops_per_second)
			SELECT '` + key + `=v'||n||'#1', '` + key + `=v'||n, 1, 1000+n, 'ok', '2026-01-01T00:00:00Z', '2026-01-01T00:00:30Z', 10000+n FROM seq`,
	}
}

// TestResultsSizesBounded: a results file that holds more than one may is refused naming the
// bound, or reported within 30 s and 1 GiB: many cells, many replica cells, many intervals, a
// stored spec of 100,000 keys, a 100 MB reason.
func TestResultsSizesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes results files of 100 MB; -short")
	}
	keys := strings.Builder{}
	keys.WriteString("name: big\n")
	for i := 0; i < 100_000; i++ {
		fmt.Fprintf(&keys, "k%d: [a]\n", i) // at the top, where every decode of the spec looks
	}
	wide := hdrhistogram.New(1, 1<<62, 5) // tens of MiB a decode
	_ = wide.RecordValue(1000)
	wideHist, err := wide.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		sql     []string
		hist    []byte
		refused string // the error, when the file is refused
	}{
		{"20000 cells", manyCells(20_000, "platform"), nil, "(valid: at most 10000)"},
		{"9000 cells against a baseline", manyCells(9000, "platform"), nil, ""},
		{"9000 replica cells", manyCells(9000, "replica"), nil, ""},
		{"90000 distinct warnings", []string{seq(90_000) + `INSERT INTO warnings SELECT 'platform=native#1', 'code'||n, 'warning', 'message '||n FROM seq`,
			seq(9000) + `INSERT INTO events SELECT '2026-01-01T00:00:00Z', 'kind'||n, 'event '||n FROM seq`}, nil, ""},
		{"3000 cells, each its own key", []string{seq(3000) + `INSERT INTO cells SELECT 'k'||n||'=v', json_object('k'||n, 'v'), NULL, 'platform=native' FROM seq`}, nil,
			"cells of more than 256 matrix keys (valid: at most 256)"},
		{"3000 cells, each its own op", append(manyCells(3000, "platform"), `INSERT INTO ops SELECT id, 'op'||seq, 'latency', 100, 0, 10, 1, 1, 1, 1, 1, 1, 1, NULL FROM runs WHERE id LIKE 'platform=v%'`), nil, "holds 3002 operation types (valid: at most 64)"},
		{"4000 interval histograms", []string{seq(4000) + `INSERT INTO intervals SELECT run_id, start_ns + n*1000000000, end_ns + n*1000000000, phase, op, series, count, errors, hist
			FROM intervals, seq WHERE run_id = 'platform=native#1' AND start_ns = 0 AND op = 'read'`}, nil, ""},
		{"390000 intervals", []string{seq(390_000) + `INSERT INTO intervals SELECT 'platform=native#1', n*1000000000, (n+1)*1000000000, 'measure', 'read', 'latency', 1, 0, NULL FROM seq`}, nil, ""},
		{"too many intervals", []string{seq(400_001) + `INSERT INTO intervals SELECT 'platform=native#1', n, n+1, 'measure', 'read', 'latency', 1, 0, NULL FROM seq`}, nil,
			"intervals for run platform=native#1 (valid: at most 400000)"},
		{"4000 wide histograms", []string{seq(4000) + `INSERT INTO intervals SELECT run_id, start_ns + n*1000000000, end_ns + n*1000000000, phase, op, series, count, errors, hist
			FROM intervals, seq WHERE run_id = 'platform=native#1' AND start_ns = 0 AND op = 'read'`}, wideHist, ""},
		{"300 MiB of interval histograms", []string{seq(300) + `INSERT INTO intervals SELECT 'platform=native#1', n, n+1, 'measure', 'read', 'latency', 1, 0, zeroblob(1048576) FROM seq`}, nil,
			"bytes of interval histograms for run platform=native#1 (valid: at most 268435456)"},
		{"990000 telemetry samples", []string{seq(990_000) + `INSERT INTO series SELECT 'platform=native#1', 'db', 'm'||(n % 40), '', (n / 40) * 1000000000, n FROM seq`}, nil, ""},
		{"too many telemetry samples", []string{seq(1_000_001) + `INSERT INTO series SELECT 'platform=native#1', 'db', 'm', '', n, n FROM seq`}, nil,
			"telemetry samples for run platform=native#1 (valid: at most 1000000)"},
		{"spec of 100000 keys", []string{`UPDATE meta SET value = '` + keys.String() + `' WHERE key = 'spec'`}, nil, ""},
		{"100 MB reason", []string{`UPDATE runs SET reason = hex(zeroblob(50000000)), log_tail = hex(zeroblob(50000000)) WHERE status = 'failed'`,
			`UPDATE cells SET skipped_reason = hex(zeroblob(50000000)) WHERE skipped_reason IS NOT NULL`}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeResFix(t, resFix{sql: tc.sql, hist: tc.hist})
			html := filepath.Join(t.TempDir(), "r.html")
			for _, args := range [][]string{{"report", dir}, {"report", "--format", "json", dir}, {"report", "--html", html, "--format", "csv", dir},
				{"results", dir}, {"results", "--format", "json", dir}, {"compare", dir, dir}} {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				start := time.Now()
				code, out, errs := runMain(t, args...)
				runtime.ReadMemStats(&after)
				if d := time.Since(start); d > 30*time.Second {
					t.Errorf("%v took %s", args[:len(args)-1], d)
				}
				if a := after.TotalAlloc - before.TotalAlloc; a > 1<<30 {
					t.Errorf("%v allocated %d MiB", args[:len(args)-1], a>>20)
				}
				if tc.refused != "" && !(args[0] == "results" && code == 0) { // the listing reads no intervals
					if code != 64 || !strings.Contains(errs, tc.refused) {
						t.Errorf("%v: exit %d, want 64 and %q: %.500s", args[:len(args)-1], code, tc.refused, errs)
					}
					continue
				}
				if code != 0 && !(args[0] == "compare" && code == 1) {
					t.Errorf("%v: exit %d: %.500s", args[:len(args)-1], code, errs)
				}
				if len(out) > 64<<20 {
					t.Errorf("%v printed %d MiB", args[:len(args)-1], len(out)>>20)
				}
			}
		})
	}
}

// TestSeriesTableBounded: samples each of its own metric at its own time would make the
// series table metrics × times; it is refused naming the bound, and JSON still lists them.
func TestSeriesTableBounded(t *testing.T) {
	dir := writeResFix(t, resFix{sql: []string{seq(10_000) + `INSERT INTO series SELECT 'platform=native#1', 'db', 'm'||n, '', n*1000000000, 1 FROM seq`}})
	start := time.Now()
	code, _, errs := runMain(t, "results", "--series", "--run", "platform=native#1", dir)
	if code != 64 || !strings.Contains(errs, "(valid: at most 20000000 cells; --format json lists the 10003 samples)") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if code, out, errs := runMain(t, "results", "--series", "--format", "json", "--run", "platform=native#1", dir); code != 0 || !strings.Contains(out, `"m9999"`) {
		t.Errorf("json: exit %d: %.300s", code, errs)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %s", d)
	}
}
