package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/compare"
	"github.com/boxbench/boxbench/internal/ownfs"
	"github.com/boxbench/boxbench/report"
	"github.com/boxbench/boxbench/results"
)

func (a *app) reportCmd() *cobra.Command {
	var format, html string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Report an experiment: overhead vs the baseline with CIs, latency, warnings",
		Long: "report prints a table per cell: throughput with its 95% CI, the overhead versus the\n" +
			"baseline with a Fieller CI, Mann-Whitney p and a verdict, p99 per operation type from\n" +
			"merged histograms, and warnings. --html writes one self-contained HTML page.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			defer onlyReading(cmd.Context(), "reading the results")()
			csvForm := slices.Contains(report.CSVForms(), format)
			if format != "text" && format != "json" && !csvForm {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--format %q is not valid (valid: text, json, %s)", format, strings.Join(report.CSVForms(), ", "))}
			}
			st, err := results.OpenExisting(args[0])
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			defer st.Close()
			r, err := report.Build(st)
			if err != nil {
				return err
			}
			if format == report.CSVRuns {
				return report.WriteCSV(a.stdout, r)
			}
			// report reads: it keeps no calibration (the run that measured one keeps it).
			if html != "" {
				if err := a.writeHTMLStopping(cmd.Context(), html, r); err != nil {
					return err
				}
			}
			if format == "json" {
				return report.WriteJSON(a.stdout, r)
			}
			if csvForm {
				return report.WriteCSVForm(a.stdout, r, format)
			}
			if html != "" {
				fmt.Fprintf(a.stderr, "HTML report: %s\n", html)
			}
			return report.WriteText(a.stdout, r)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json, csv (one row per run), sweep-csv (one row per point of each sweep's curves), published-csv (one row per effect of the spec's published study) or where-csv (one row per cell and component of where the time goes)")
	cmd.Flags().StringVar(&html, "html", "", "also write a self-contained HTML report to FILE")
	return cmd
}

// writeHTMLStopping is writeHTML for report --html: a signal while it writes lets it finish
// (an exit at once would leave its temporary file), and report then ends with 130.
func (a *app) writeHTMLStopping(ctx context.Context, path string, r *report.Report) error {
	defer stopping(ctx, "writing "+path, "it is written")()
	if err := writeHTML(path, r); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return interrupted("stopped once " + path + " was written; the report was not printed")
	}
	return nil
}

// writeHTML writes the HTML report to path: the directory as named (not a system directory),
// the file itself never followed (a link or anything but a regular file at path is refused),
// an existing file replaced only when it is a boxbench report, written whole through an
// exclusive temporary file beside it.
func writeHTML(path string, r *report.Report) error {
	d, err := ownfs.OpenDir(filepath.Dir(path))
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--html %s: %w", path, err)}
	}
	defer d.Close()
	if real, err := d.RealPath(); err == nil {
		if sys, ok := ownfs.SystemDir(real); ok {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--html %s: %s is the system directory %s or inside it; no report was written (valid: a file in a directory of your own)", path, real, sys)}
		}
	}
	name := filepath.Base(path)
	if err := replaceable(d, name); err != nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--html %s: %w", path, err)}
	}
	return writeHTMLIn(d, name, r)
}

// replaceable refuses an existing regular file at name that is not a boxbench HTML report
// (report.HTMLGenerator in its head): --html must not overwrite someone's file without a word.
func replaceable(d *ownfs.Dir, name string) error {
	if _, exists, err := d.Lstat(name); err != nil || !exists {
		return err
	}
	f, err := d.OpenRegular(name, os.O_RDONLY)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 1024)
	n, _ := io.ReadFull(f, head)
	if !bytes.Contains(head[:n], []byte(report.HTMLGenerator)) {
		return fmt.Errorf("%s exists and is not a boxbench report; it was left as it is and no report was written (valid: a new file name, or a boxbench report to replace)", d.Join(name))
	}
	return nil
}

func writeHTMLIn(d *ownfs.Dir, name string, r *report.Report) error {
	if what, err := d.NotRegular(name); err != nil || what != "" {
		if err == nil {
			err = fmt.Errorf("%s is %s, not a regular file; it was left as it is and no report was written (valid: a new file name, or a report to replace)", d.Join(name), what)
		}
		return &ExitError{Code: ExitUsage, Err: err}
	}
	err := d.WriteAtomic(name, 0o644, func(f *os.File) error { return report.WriteHTML(f, r) })
	// A full disk must not keep a partial report: WriteAtomic removed its temporary file.
	return results.DiskFull(err, d.Join(name))
}

// finalReport ends `run`: the HTML report beside the results (in the directory the run still
// holds), the table on stdout, and the calibration the run measured kept as this host's.
func (a *app) finalReport(out *results.Out, experimentID string) error {
	st, err := results.OpenExisting(out.Path())
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := report.Build(st)
	if err != nil {
		return err
	}
	if r.Experiment.ID == experimentID {
		a.keepCalibration(r, st.Path())
	}
	if err := writeHTMLIn(out.Dir, "report.html", r); err != nil {
		return err
	}
	html := out.Dir.Join("report.html")
	if !a.quiet {
		if err := report.WriteText(a.stdout, r); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.stdout, "HTML report: %s\n", html)
	return nil
}

func (a *app) compareCmd() *cobra.Command {
	var maxReg, format string
	cmd := &cobra.Command{
		Use:   "compare BASE_DIR NEW_DIR",
		Short: "Compare matching cells of two experiments; exit 1 on a significant regression",
		Long: "compare matches the cells of two experiments (e.g. before and after a kernel or runtime\n" +
			"upgrade) and tests each cell's throughput. A cell regresses when NEW is significantly\n" +
			"slower (Mann-Whitney p < 0.05 and a CI that excludes no change) by more than\n" +
			"--max-regression. Usable as a CI gate: exit 1 on a regression.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			defer onlyReading(cmd.Context(), "reading the results")()
			tol, err := parsePercent(maxReg)
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--max-regression %q: %v (write it like 5%%)", maxReg, err)}
			}
			if format != "text" && format != "json" {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--format %q is not valid (valid: text, json)", format)}
			}
			var reps [2]*report.Report
			for i, dir := range args {
				st, err := results.OpenExisting(dir)
				if err != nil {
					return &ExitError{Code: ExitUsage, Err: err}
				}
				reps[i], err = report.Build(st)
				st.Close()
				if err != nil {
					return err
				}
			}
			c, err := compare.New(reps[0], reps[1], tol)
			if err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			if format == "json" {
				err = compare.WriteJSON(a.stdout, c)
			} else {
				err = compare.WriteText(a.stdout, c)
			}
			if err != nil {
				return err
			}
			if c.Regressed() {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("significant regression beyond %s", maxReg)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&maxReg, "max-regression", "5%", "tolerated throughput loss before a significant slowdown fails")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

func parsePercent(s string) (float64, error) {
	s = strings.TrimSpace(s)
	div := 1.0
	if strings.HasSuffix(s, "%") {
		s, div = strings.TrimSuffix(s, "%"), 100
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v/div >= 1 {
		return 0, fmt.Errorf("not a percentage between 0 and 100")
	}
	return v / div, nil
}
