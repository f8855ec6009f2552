package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/workload"
)

// csvOpFields are the per-op columns, suffixed to "<op>_" (latency series) or
// "<op>_<series>_" (other series); latencies in µs.
var csvOpFields = []string{"count", "errors", "ops_per_second", "p50_us", "p90_us", "p95_us", "p99_us",
	"p999_us", "max_us", "mean_us"}

// WriteCSV writes one row per stored run (tidy: one variable per column): identity, status,
// every matrix param, throughput (ops/s), per op type and series the count, errors, rate and
// latency percentiles (µs), the client's CPU, and the warnings. Missing values are empty.
func WriteCSV(w io.Writer, r *Report) error {
	if len(r.decoded) != len(r.Runs) { // a Report not made by Build
		r.decodeResults()
	}
	runs, keys := r.Runs, r.Keys
	params := map[string]map[string]string{}
	for _, c := range r.Cells {
		params[c.ID] = c.Params
	}
	type opKey struct{ op, series string }
	opSet := map[opKey]bool{}
	for _, run := range runs {
		for _, o := range run.Ops {
			opSet[opKey{o.Op, o.Series}] = true
		}
	}
	ops := slices.Collect(maps.Keys(opSet))
	slices.SortFunc(ops, func(a, b opKey) int {
		if (a.series == LatencySeries) != (b.series == LatencySeries) {
			if a.series == LatencySeries {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.series, b.series); c != 0 {
			return c
		}
		return strings.Compare(a.op, b.op)
	})
	prefix := func(k opKey) string {
		if k.series == LatencySeries {
			return k.op + "_"
		}
		return k.op + "_" + k.series + "_"
	}

	head := []string{"run", "cell", "rep", "seq", "status", "reason", "started_at", "ended_at"}
	head = append(head, keys...)
	head = append(head, "mode", "threads", "measured_seconds", "throughput_ops_per_second")
	for _, k := range ops {
		for _, f := range csvOpFields {
			head = append(head, prefix(k)+f)
		}
	}
	head = append(head, "client_cpu_seconds", "client_cpu_cores", "warnings", "warning_codes")

	cw := csv.NewWriter(w)
	if err := cw.Write(head); err != nil {
		return err
	}
	for i, run := range runs {
		row := []string{run.ID, run.CellID, strconv.Itoa(run.Rep), strconv.Itoa(run.Seq), run.Status,
			oneLine(run.Reason), stamp(run.Started), stamp(run.Ended)}
		for _, k := range keys {
			row = append(row, params[run.CellID][k])
		}
		res, hasRes := r.decoded[i].res, r.decoded[i].ok
		if hasRes {
			row = append(row, string(res.Mode), strconv.Itoa(res.Threads), num(res.Measured.Seconds()))
		} else {
			row = append(row, "", "", "")
		}
		if run.Throughput != nil {
			row = append(row, num(*run.Throughput))
		} else {
			row = append(row, "")
		}
		byKey := map[opKey]results.OpRow{}
		for _, o := range run.Ops {
			byKey[opKey{o.Op, o.Series}] = o
		}
		for _, k := range ops {
			o, ok := byKey[k]
			if !ok {
				row = append(row, make([]string, len(csvOpFields))...)
				continue
			}
			row = append(row, strconv.FormatInt(o.Count, 10), strconv.FormatInt(o.Errors, 10), num(o.Throughput),
				num(micros(o.P50)), num(micros(o.P90)), num(micros(o.P95)), num(micros(o.P99)),
				num(micros(o.P999)), num(micros(o.Max)), num(o.Mean/1e3))
		}
		if hasRes && res.ClientCPU > 0 {
			cores, _ := res.ClientCores() // over the time the CPU was charged in
			row = append(row, num(res.ClientCPU.Seconds()), num(cores))
		} else {
			row = append(row, "", "")
		}
		var codes []string
		seen := map[string]bool{} // slices.Contains was quadratic in a run's warnings
		for _, w := range run.Warnings {
			if !seen[w.Code] {
				seen[w.Code] = true
				codes = append(codes, w.Code)
			}
		}
		row = append(row, strconv.Itoa(len(run.Warnings)), strings.Join(codes, ";"))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// runResult is a run's stored result, decoded; ok is false when the run stored none or it
// does not decode.
type runResult struct {
	res workload.Result
	ok  bool
}

// decodeResults decodes every run's stored result once, for the per-run CSV.
func (r *Report) decodeResults() {
	r.decoded = make([]runResult, len(r.Runs))
	for i, run := range r.Runs {
		d := &r.decoded[i]
		d.ok = len(run.Result) > 0 && json.Unmarshal(run.Result, &d.res) == nil
	}
}

// WriteCSVForm writes the CSV form name: "csv" (WriteCSV, the report's own, one row per run)
// or one a section offers (Section.CSV: "sweep-csv"). An unknown name is an error listing the
// The CSV forms: the runs' own (WriteCSV) and those the sections offer (Section.CSV), the one
// list `report --format` accepts (TestCSVFormsListed holds it to the sections).
const (
	CSVRuns      = "csv"
	CSVSweep     = "sweep-csv"
	CSVPublished = "published-csv"
	CSVWhere     = "where-csv"
)

// CSVForms are the names of every CSV form, the runs' first.
func CSVForms() []string { return []string{CSVRuns, CSVSweep, CSVPublished, CSVWhere} }

// valid ones.
func WriteCSVForm(w io.Writer, r *Report, name string) error {
	if name == CSVRuns {
		return WriteCSV(w, r)
	}
	sections, err := r.sections()
	if err != nil {
		return err
	}
	valid := []string{"csv"}
	for _, s := range sections {
		for _, f := range s.CSV() {
			if f.Name == name {
				return f.Write(w)
			}
			valid = append(valid, f.Name)
		}
	}
	return fmt.Errorf("no CSV form %q (valid: %s)", name, strings.Join(valid, ", "))
}
