package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/spec"
)

func (a *app) planCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "plan FILE",
		Short: "Validate a spec and print its cells and runs in run order, with skipped cells and why",
		Long: "plan validates the spec, expands the matrix, filters what this host cannot run (with the\n" +
			"reason) and prints the runs in the order run would execute them. Nothing is started.\n" +
			"It ends with what decides precision here (wake-up costs, cpus, load and steal over one\n" +
			"second, the last calibration kept under --work-root) and what the spec can resolve:\n" +
			"the detectable effect at its runs per cell and the runs its targetEffect needs.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// plan asks the engines and clusters (each question bounded) and starts nothing.
			defer onlyReading(cmd.Context(), "planning")()
			ps := builtin.Platforms(a.log)
			e, _, err := loadSpec(args[0], ps)
			if err != nil {
				return err
			}
			builtin.ForPlan(ps)
			seed := uint64(0)
			if e.Seed != nil {
				seed = uint64(*e.Seed)
			}
			p, problems := plan.Expand(cmd.Context(), e, seed, builtin.Checker(ps, false))
			if len(problems) > 0 {
				return &spec.Error{File: args[0], Problems: problems}
			}
			if err := a.buildWorkloads(e, p); err != nil {
				return err
			}
			printPlan(a.stdout, e, p)
			writePrecision(a.stdout, lookAtHost(a.workRoot), e)
			return nil
		},
	}
}

func (a *app) buildWorkloads(e *spec.Experiment, p *plan.Plan) error {
	var problems []string
	for _, c := range p.Cells {
		if _, err := builtin.Workload(e, c); err != nil {
			problems = append(problems, fmt.Sprintf("cell %s: %v", c.ID, err))
		}
	}
	// Neighbours too, before any box is up (their window does not change what is valid).
	for _, n := range spec.SortedNeighbours(e) {
		if _, err := builtin.Neighbour(e.Neighbours[n], time.Minute); err != nil {
			problems = append(problems, fmt.Sprintf("neighbours.%s: %v", n, err))
		}
	}
	if len(problems) > 0 {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("workload configuration:\n  %s", strings.Join(problems, "\n  "))}
	}
	return nil
}

// printUnmeasured lists the effects of the spec's published study that no cell of this matrix
// measures (a study cut to fewer cells keeps its block), the cells this host skips included.
func printUnmeasured(w io.Writer, e *spec.Experiment, p *plan.Plan) {
	if e.Published == nil {
		return
	}
	var params []map[string]string
	for _, c := range p.Cells {
		params = append(params, c.Params)
	}
	for _, s := range p.Skipped {
		params = append(params, s.Cell.Params)
	}
	head := false
	for _, eff := range e.Published.Effects {
		why := eff.Unmeasured(params)
		if why == "" {
			continue
		}
		if !head {
			fmt.Fprintln(w, "\npublished effects this matrix does not measure (reported as not measured):")
			head = true
		}
		fmt.Fprintf(w, "  %s: not measured (%s)\n", eff.Name, why)
	}
}

func printPlan(w io.Writer, e *spec.Experiment, p *plan.Plan) {
	fmt.Fprintf(w, "experiment %s: %d cells, %d skipped, %d runs (%s", e.Name, len(p.Cells), len(p.Skipped), len(p.Runs), e.Order)
	if e.Seed == nil && e.Order == "randomized" {
		fmt.Fprint(w, "; run draws a new seed and records it, set seed: in the spec to fix the order")
	}
	fmt.Fprintln(w, ")")
	if r := e.Repetitions; r.Adaptive() {
		var while []string
		if r.TargetCIHalfWidth > 0 {
			while = append(while, fmt.Sprintf("the 95%% CI half-width exceeds %g%% of the mean", float64(r.TargetCIHalfWidth)*100))
		}
		if r.TargetEffect > 0 {
			while = append(while, fmt.Sprintf("the comparison with the baseline cannot detect a %g%% overhead", float64(r.TargetEffect)*100))
		}
		fmt.Fprintf(w, "repetitions: %d per cell, up to %d while %s\n", r.Min, r.Max, strings.Join(while, " or "))
	}
	fmt.Fprintln(w, "\ncells:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, c := range p.Cells {
		var base string
		switch b, skipped := p.Baseline[c], p.BaselineSkipped[c]; {
		case b == c:
			base = "baseline"
		case b != nil:
			base = "vs " + b.ID
		case skipped != nil:
			base = "(no baseline: " + skipped.ID + " is skipped, below)"
		default:
			base = "(no baseline)"
		}
		recs := ""
		if c.Records > 0 {
			recs = fmt.Sprintf("%d records", c.Records)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.ID, recs, base)
	}
	tw.Flush()
	printUnmeasured(w, e, p)
	printPrerequisites(w, p)
	if len(p.Skipped) > 0 {
		fmt.Fprintln(w, "\nskipped:")
		for _, s := range p.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", s.Cell.ID, strings.ReplaceAll(s.Reason, "\n", "; "))
		}
	}
	if e.Order == "duet" {
		if sides, err := runner.DuetSides(e); err == nil {
			how := "placement.duet"
			if e.Placement.Duet == "" {
				how = fmt.Sprintf("chosen for %d cpus; placement.duet sets it", len(placement.HostCPUs()))
			}
			fmt.Fprintf(w, "\nduet layout %s (%s): side A %s; side B %s\n", sides[0].Layout, how, sides[0], sides[1])
		}
		fmt.Fprintln(w, "\nduets, in order (side A | side B, at the same time):")
		for i := 0; i+1 < len(p.Runs); i += 2 {
			fmt.Fprintf(w, "  %3d  %s | %s\n", i/2+1, p.Runs[i].ID(), p.Runs[i+1].ID())
		}
		return
	}
	fmt.Fprintln(w, "\nruns, in order:")
	for i, r := range p.Runs {
		fmt.Fprintf(w, "  %3d  %s\n", i+1, r.ID())
	}
}

func (a *app) runCmd() *cobra.Command {
	var out string
	var resume bool
	var untilRound int
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run an experiment and store every run in DIR/results.db",
		Long: "run executes the experiment: for each run, in order, it provisions the box, restores the\n" +
			"loaded data, warms up, measures with telemetry, tears the box down and stores the run.\n" +
			"Ctrl-C tears the current run down and exits non-zero; --resume continues later.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			started := nothingStarted(cmd.Context())
			defer started()
			ps := builtin.Platforms(a.log)
			e, text, err := loadSpec(args[0], ps)
			if err != nil {
				return err
			}
			if untilRound < 0 {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--until-round %d: must be 0 (every round) or a round number from 1", untilRound)}
			}
			if out == "" {
				out = filepath.Join("out", e.Name)
			}
			// Everything that can refuse the spec runs before the runner opens --out: a spec
			// that fails validation must never claim the directory (the plan's problems do not
			// depend on the seed; the runner expands it again with the real one).
			p, problems := plan.Expand(cmd.Context(), e, 0, builtin.Checker(ps, false))
			if len(problems) > 0 {
				return &spec.Error{File: args[0], Problems: problems}
			}
			if err := p.Unmet(); err != nil {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			if err := a.buildWorkloads(e, p); err != nil {
				return err
			}
			var progress runner.Progress = &logProgress{log: a.log}
			if isTerminal(a.stderr) && !a.quiet {
				progress = newBarProgress(a.stderr)
			}
			if a.quiet {
				progress = nil
			}
			// --out is claimed (checked, made, locked) before anything is written in it, and held
			// until the report is written there.
			claimed, err := results.Claim(out, e.Name, a.workRoot)
			if err != nil {
				code := ExitUsage
				if errors.Is(err, results.ErrInUse) {
					code = ExitFailure
				}
				return &ExitError{Code: code, Err: err}
			}
			defer claimed.Close()
			started() // from here a signal tears down what the runner made
			sum, err := runner.Run(cmd.Context(), runner.Config{Spec: e, SpecText: text, OutDir: out, Out: claimed,
				WorkRoot: a.workRoot, Resume: resume, UntilRound: untilRound, Platforms: ps, Workloads: builtin.Workload,
				Neighbours: builtin.Neighbour, DBMS: builtin.DBMS,
				Check: builtin.Checker(ps, true), Log: a.log, Progress: progress})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "experiment %s: %d ok, %d failed, %d cells skipped\nresults: %s\n",
				sum.ExperimentID, sum.OK, sum.Failed, sum.Skipped, sum.ResultsFile)
			// Every run is stored: a signal now has nothing to tear down; the report is
			// finished (its temporary file would be left otherwise) and run ends with 130.
			reporting := stopping(cmd.Context(), "writing the report", "it is written")
			err = a.finalReport(claimed, sum.ExperimentID)
			reporting()
			if cmd.Context().Err() != nil {
				return interrupted("stopped after the runs were stored; boxbench report " + out + " reports them")
			}
			if err != nil {
				return err
			}
			if sum.Failed > 0 {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d run(s) failed; their reasons are stored", sum.Failed),
					Hint: "boxbench results " + out + " shows each failure with the database's log tail"}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "experiment directory (default out/<name>)")
	cmd.Flags().BoolVar(&resume, "resume", false, "continue an interrupted experiment in --out")
	cmd.Flags().IntVar(&untilRound, "until-round", 0, "run only the planned rounds up to N, then stop (--resume continues): experiments that take turns round by round see the same load")
	return cmd
}

// printPrerequisites lists what the host lacks for some cells, each with its command and
// estimate, and how many cells wait for it; the cells above are planned as they will run then.
func printPrerequisites(w io.Writer, p *plan.Plan) {
	if len(p.Prerequisites) == 0 {
		return
	}
	var total time.Duration
	fmt.Fprintln(w, "\nprerequisites (run refuses until they are met; the cells above are planned as they will run then):")
	for _, pr := range p.Prerequisites {
		fmt.Fprintf(w, "  %s\n    for %d cell(s): %s\n", pr.String(), len(pr.Cells), cellIDs(pr.Cells, 3))
		total += pr.Takes
	}
	if len(p.Prerequisites) > 1 && total > 0 {
		fmt.Fprintf(w, "  in all about %s, one after another\n", prereq.About(total))
	}
}

// cellIDs names up to n cells, and how many more.
func cellIDs(cs []*plan.Cell, n int) string {
	var ids []string
	for i, c := range cs {
		if i == n {
			ids = append(ids, fmt.Sprintf("and %d more", len(cs)-n))
			break
		}
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, ", ")
}
