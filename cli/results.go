package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/report"
	"github.com/boxbench/boxbench/results"
)

func (a *app) resultsCmd() *cobra.Command {
	var format, runID string
	var series bool
	cmd := &cobra.Command{
		Use:   "results DIR",
		Short: "List an experiment's runs: status (ok / failed + reason / skipped) and headline numbers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			defer onlyReading(cmd.Context(), "reading the results")()
			if format != "table" && format != "json" && format != "csv" {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--format %q is not valid (valid: table, json, csv)", format)}
			}
			st, err := results.OpenExisting(args[0])
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			defer st.Close()
			if series {
				if runID == "" {
					return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--series needs --run ID (run ids are listed by boxbench results %s)", args[0])}
				}
				return printSeries(a.stdout, st, runID, format)
			}
			runs, err := st.Runs()
			if err != nil {
				return err
			}
			cells, err := st.Cells()
			if err != nil {
				return err
			}
			if runID != "" {
				runs = filterRun(runs, runID)
				if len(runs) == 0 {
					return &ExitError{Code: ExitUsage, Err: fmt.Errorf("no run %q in %s", runID, args[0])}
				}
			}
			switch format {
			case "json":
				return writeRunsJSON(a.stdout, runs, cells)
			case "csv":
				return writeRunsCSV(a.stdout, runs)
			}
			writeRunsTable(a.stdout, runs, cells)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json or csv")
	cmd.Flags().StringVar(&runID, "run", "", "show one run (its id, e.g. platform=native/storage=bind#1)")
	cmd.Flags().BoolVar(&series, "series", false, "print the run's telemetry time series (with --run)")
	return cmd
}

func filterRun(runs []results.RunRow, id string) []results.RunRow {
	for _, r := range runs {
		if r.ID == id {
			return []results.RunRow{r}
		}
	}
	return nil
}

func writeRunsTable(w io.Writer, runs []results.RunRow, cells []results.CellRecord) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tTHROUGHPUT\tP99 BY OP (latency)\tWARNINGS\tREASON")
	for _, r := range runs {
		thr := "-"
		if r.Throughput != nil {
			thr = fmt.Sprintf("%.0f ops/s", *r.Throughput)
		}
		var p99 []string
		for _, o := range r.Ops {
			if o.Series == "latency" {
				p99 = append(p99, fmt.Sprintf("%s %s", o.Op, micros(o.P99)))
			}
		}
		var codes []string
		for _, wn := range r.Warnings {
			codes = append(codes, wn.Code)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, thr, orDash(strings.Join(p99, ", ")),
			orDash(strings.Join(codes, ",")), truncate(firstLine(r.Reason), 100))
	}
	for _, c := range cells {
		if c.SkippedReason != "" {
			fmt.Fprintf(tw, "%s\tskipped\t-\t-\t-\t%s\n", c.ID, truncate(firstLine(c.SkippedReason), 100))
		}
	}
	tw.Flush()
}

func micros(ns int64) string { return fmt.Sprintf("%.0fµs", float64(ns)/1e3) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 1
	for i > 0 && !utf8.RuneStart(s[i]) {
		i-- // whole characters: a cut one would print as an escaped invalid byte
	}
	return s[:i] + "…"
}

func writeRunsJSON(w io.Writer, runs []results.RunRow, cells []results.CellRecord) error {
	var skipped []results.CellRecord
	for _, c := range cells {
		if c.SkippedReason != "" {
			skipped = append(skipped, c)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return report.JSONError(enc.Encode(map[string]any{"runs": runs, "skipped_cells": skipped}))
}

// writeRunsCSV writes one row per run and op type (tidy), latencies in µs.
func writeRunsCSV(w io.Writer, runs []results.RunRow) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"run", "cell", "rep", "seq", "status", "reason", "throughput_ops_per_second",
		"op", "series", "count", "errors", "op_ops_per_second", "p50_us", "p90_us", "p95_us", "p99_us", "p999_us", "max_us", "warnings"})
	us := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 3, 64) }
	for _, r := range runs {
		thr := ""
		if r.Throughput != nil {
			thr = strconv.FormatFloat(*r.Throughput, 'f', 3, 64)
		}
		base := []string{r.ID, r.CellID, strconv.Itoa(r.Rep), strconv.Itoa(r.Seq), r.Status, firstLine(r.Reason), thr}
		var codes []string
		for _, wn := range r.Warnings {
			codes = append(codes, wn.Code)
		}
		if len(r.Ops) == 0 {
			_ = cw.Write(append(base, "", "", "", "", "", "", "", "", "", "", "", strings.Join(codes, ";")))
		}
		for _, o := range r.Ops {
			_ = cw.Write(append(append([]string{}, base...), o.Op, o.Series, strconv.FormatInt(o.Count, 10),
				strconv.FormatInt(o.Errors, 10), strconv.FormatFloat(o.Throughput, 'f', 3, 64),
				us(o.P50), us(o.P90), us(o.P95), us(o.P99), us(o.P999), us(o.Max), strings.Join(codes, ";")))
		}
	}
	cw.Flush()
	return cw.Error()
}

// maxSeriesCells bounds the table (and CSV) of a run's series: a run of a day sampled every
// second has 86,400 times and a few dozen metrics.
const maxSeriesCells = 20_000_000

// printSeries prints a run's telemetry: one row per interval, one column per metric.
func printSeries(w io.Writer, st *results.Store, runID, format string) error {
	pts, err := st.Series(runID)
	if err != nil {
		return err
	}
	if len(pts) == 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("run %q has no time series (is the id right? boxbench results lists them)", runID)}
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return report.JSONError(enc.Encode(pts))
	}
	names, times, rows := alignSeries(pts)
	// A table is metrics × times: a results file's samples, each its own metric at its own
	// time, would make it quadratic in their number. JSON lists the samples as they are.
	if cells := int64(len(names)) * int64(len(times)); cells > maxSeriesCells {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("run %q's series would be a table of %d metrics × %d times (valid: at most %d cells; --format json lists the %d samples)",
			runID, len(names), len(times), maxSeriesCells, len(pts))}
	}
	if format == "csv" {
		cw := csv.NewWriter(w)
		_ = cw.Write(append([]string{"t_ms"}, names...))
		for _, t := range times {
			rec := []string{strconv.FormatInt(t, 10)}
			for _, n := range names {
				if v, ok := rows[t][n]; ok {
					rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
				} else {
					rec = append(rec, "") // absent, never 0
				}
			}
			_ = cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	}
	// Table: one row per metric, one column per sample time (a run has tens of samples).
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "metric \\ t (s)\t")
	for _, t := range times {
		fmt.Fprintf(tw, "%.1f\t", float64(t)/1e3)
	}
	fmt.Fprintln(tw)
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n)
		for _, t := range times {
			if v, ok := rows[t][n]; ok {
				fmt.Fprintf(tw, "%s\t", strconv.FormatFloat(v, 'g', 4, 64))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// alignSeries puts a run's samples on the run's telemetry intervals. Sources are sampled one
// after another (db, host, client a few ms apart), so exact times would give each source its
// own row; instead every sample goes to the interval whose end is nearest to it. The interval
// is the median spacing of consecutive samples of one series. It returns the sorted column
// names, the interval ends (ms from the run's clock origin) and the values by end and name.
func alignSeries(pts []results.Point) (names []string, times []int64, rows map[int64]map[string]float64) {
	last := map[string]time.Duration{}
	var gaps []time.Duration
	for _, p := range pts {
		key := p.Source + "\x00" + p.Metric + "\x00" + p.Label
		if t, ok := last[key]; ok && p.T > t {
			gaps = append(gaps, p.T-t)
		}
		last[key] = p.T
	}
	step := time.Millisecond
	if len(gaps) > 0 {
		slices.Sort(gaps)
		step = max(gaps[len(gaps)/2], time.Millisecond)
	}
	cols := map[string]bool{}
	rows = map[int64]map[string]float64{}
	for _, p := range pts {
		name := p.Source + "." + p.Metric
		if p.Label != "" {
			name += "{" + p.Label + "}"
		}
		cols[name] = true
		k := (p.T + step/2) / step // the nearest interval end
		t := int64(k * step / time.Millisecond)
		if rows[t] == nil {
			rows[t] = map[string]float64{}
		}
		rows[t][name] = p.Value
	}
	for n := range cols {
		names = append(names, n)
	}
	sort.Strings(names)
	for t := range rows {
		times = append(times, t)
	}
	slices.Sort(times)
	return names, times, rows
}
