package cli

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestResultsValuesNonFinite: ±Inf, NaN and 1e308 in stored figures are rendered as such or
// refused naming the run, the field and the value — never a crash, never JSON that is not JSON,
// and within 30 s and well under 1 GiB of allocation in every writer.
func TestResultsValuesNonFinite(t *testing.T) {
	run := "platform=native#1"
	for _, tc := range []struct{ name, sql string }{
		{"throughput inf", `UPDATE runs SET throughput_ops_per_second = 9e999 WHERE id = '` + run + `'`},
		{"throughput -inf", `UPDATE runs SET throughput_ops_per_second = -9e999`},
		{"throughput 1e308", `UPDATE runs SET throughput_ops_per_second = 1e308 WHERE id = '` + run + `'`},
		{"throughput -1e308", `UPDATE runs SET throughput_ops_per_second = -1e308`},
		{"throughput zero", `UPDATE runs SET throughput_ops_per_second = 0`},
		{"throughput negative", `UPDATE runs SET throughput_ops_per_second = -5 WHERE id = '` + run + `'`},
		{"sweep x non-finite", `UPDATE cells SET params = json_set(params, '$."workload.targetRate"', CASE WHEN id LIKE '%native%' THEN 'NaN' ELSE '1e308' END)`},
		{"sweep x inf", `UPDATE cells SET params = json_set(params, '$."workload.threads"', CASE WHEN id LIKE '%native%' THEN '-Inf' ELSE '+Inf' END)`},
		{"calibration cpus", `UPDATE cells SET params = json_object('replica', 'a', 'cpus', CASE WHEN id LIKE '%native%' THEN '1' ELSE 'NaN' END)`},
		{"ops inf", `UPDATE ops SET ops_per_second = 9e999, mean_ns = -9e999`},
		{"ops 1e308", `UPDATE ops SET ops_per_second = 1e308, mean_ns = 1e308`},
		{"ops huge ns", `UPDATE ops SET p50_ns = 9223372036854775807, p99_ns = 9223372036854775807, max_ns = -9223372036854775807`},
		{"series inf", `UPDATE series SET value = 9e999`},
		{"series 1e308", `UPDATE series SET value = 1e308 WHERE rowid % 2 = 0`},
		{"series -1e308", `UPDATE series SET value = -1e308 WHERE rowid % 2 = 1`},
		{"series far times", `UPDATE series SET t_ns = 9223372036854775807 WHERE rowid % 2 = 0`},
		{"result 1e308", `UPDATE runs SET result = json_set(result, '$.metrics.tps_per_second', 1e308, '$.measured_ns', 1, '$.ops[0].ops_per_second', 1e308)`},
		{"result inf text", `UPDATE runs SET result = replace(result, '"threads":4', '"threads":4,"target_ops_per_second":1e999')`},
		{"facts numbers", `UPDATE runs SET facts = '{"cpu_share":"NaN","seed":"Inf","x":"1e308"}'`},
		{"interval inf", `UPDATE intervals SET start_ns = -9223372036854775807, end_ns = 9223372036854775807 WHERE rowid % 3 = 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeResFix(t, resFix{sql: []string{tc.sql}})
			other := writeResFix(t, resFix{})
			html := filepath.Join(t.TempDir(), "r.html")
			for _, args := range [][]string{
				{"report", dir}, {"report", "--format", "json", dir}, {"report", "--format", "csv", dir},
				{"report", "--format", "sweep-csv", dir}, {"report", "--html", html, dir},
				{"results", dir}, {"results", "--format", "json", dir}, {"results", "--format", "csv", dir},
				{"results", "--series", "--format", "json", "--run", run, dir}, {"results", "--series", "--run", run, dir},
				{"compare", "--format", "json", dir, other}, {"compare", other, dir},
			} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				start := time.Now()
				code, out, errs := runMain(t, args...)
				runtime.ReadMemStats(&after)
				if d := time.Since(start); d > 30*time.Second {
					t.Errorf("%v took %s", args, d)
				}
				if a := after.TotalAlloc - before.TotalAlloc; a > 1<<30 {
					t.Errorf("%v allocated %d MiB", args, a>>20)
				}
				if strings.Contains(errs, "panic") || strings.Contains(errs, "goroutine ") {
					t.Fatalf("%v: %s", args, errs)
				}
				if code != 0 && code != 1 && code != 64 {
					t.Errorf("%v: exit %d: %s", args, code, errs)
				}
				refused := code == 64 && strings.Contains(errs, "(valid: ") && strings.Contains(errs, "docs/results.md")
				gap := code == 1 && strings.Contains(errs, "has no time series")                        // every sample left out
				unmatched := args[0] == "compare" && code == 64 && strings.Contains(errs, "no cell of") // the params differ
				if code != 0 && !refused && !gap && !unmatched && !(args[0] == "compare" && code == 1) {
					t.Errorf("%v: exit %d without naming the bound: %s", args, code, errs)
				}
				if code == 0 && slices.Contains(args, "json") && !json.Valid([]byte(out)) {
					t.Errorf("%v: not JSON: %.300s", args, out)
				}
			}
		})
	}
}
