// Package cli is boxbench's command line. Main runs it with the process's streams passed in,
// so tests can run the real commands in-process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/platform"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/boxbench/boxbench/internal/liblog"
	"github.com/boxbench/boxbench/internal/safefile"
	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
	"github.com/boxbench/boxbench/spec"
)

// Exit codes (docs/cli.md). 2 is never boxbench's own: it is what the Go runtime exits with on
// a crash (a panic, a fatal error such as running out of memory), so that a script can tell a
// crash from a refusal.
const (
	ExitOK          = 0
	ExitFailure     = 1  // the command ran but something failed (a run, a gate, a check)
	ExitUsage       = 64 // bad flags or a bad spec (sysexits' EX_USAGE): nothing was started
	ExitInterrupted = 130
)

// ExitError carries an exit code and a hint for the user.
type ExitError struct {
	Code int
	Err  error
	Hint string
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

type app struct {
	stdin     io.Reader // nil: the process's own
	stdout    *format.TerminalWriter
	stderr    io.Writer
	quiet     bool
	logFormat string
	workRoot  string
	log       *slog.Logger

	// rawStdout is stdout unfiltered, for the agent's protocol; every other command writes
	// through stdout, a format.TerminalWriter over it, so no string from a results file or an
	// engine reaches a terminal as an escape sequence.
	rawStdout io.Writer
}

// newApp is the app over the process's streams: stdout through a format.TerminalWriter.
func newApp(stdout, stderr io.Writer) *app {
	return &app{stdout: format.Terminal(stdout), rawStdout: stdout, stderr: stderr}
}

// Main runs boxbench with args and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := newApp(stdout, stderr)
	defer a.stdout.Flush()
	root := a.root()
	root.SetArgs(args)
	root.SetOut(a.stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	var se *spec.Error
	switch {
	case errors.As(err, &se):
		fmt.Fprintln(stderr, "error:", format.SafeLines(se.Error()))
		return ExitUsage
	case errors.Is(err, runner.ErrInterrupted):
		fmt.Fprintln(stderr, "interrupted: the current run was torn down and not stored; continue with --resume")
		return ExitInterrupted
	case errors.As(err, &ee) && ee.Code == ExitInterrupted:
		fmt.Fprintln(stderr, ee.Err) // "interrupted: …", said by the command (interrupted)
		return ee.Code
	case errors.As(err, &ee):
		fmt.Fprintln(stderr, "error:", format.SafeLines(ee.Err.Error())) // a message may quote a results file or an engine
		if ee.Hint != "" {
			fmt.Fprintln(stderr, "hint:", format.SafeLines(ee.Hint))
		}
		return ee.Code
	}
	fmt.Fprintln(stderr, "error:", format.SafeLines(err.Error()))
	if errors.Is(err, results.ErrBounds) {
		return ExitUsage // a results file that holds more than one may is refused input
	}
	if strings.Contains(err.Error(), "unknown flag") || strings.Contains(err.Error(), "unknown command") ||
		strings.Contains(err.Error(), "accepts") || strings.Contains(err.Error(), "requires") {
		return ExitUsage
	}
	return ExitFailure
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "boxbench",
		Short: "Measure what running a database in a box costs, compared with a plain process",
		Long: "boxbench deploys the same database build with the same configuration, data and limits\n" +
			"under every configuration of an experiment's matrix (native, docker, storage and network\n" +
			"paths, runtimes), drives the same workload, repeats, and reports each configuration's\n" +
			"overhead relative to a baseline with confidence intervals.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setupLog()
		},
	}
	f := root.PersistentFlags()
	f.BoolVarP(&a.quiet, "quiet", "q", false, "print only errors and the final result")
	f.StringVar(&a.logFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&a.workRoot, "work-root", "/var/tmp/boxbench", "where boxes keep their data directories, seeds and locks")
	root.AddCommand(a.planCmd(), a.runCmd(), a.resultsCmd(), a.doctorCmd(), a.versionCmd(),
		a.imagesCmd(), a.reportCmd(), a.compareCmd(), a.agentCmd(), a.setupCmd())
	return root
}

func (a *app) setupLog() error {
	level := slog.LevelInfo
	if a.quiet {
		level = slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: level}
	switch a.logFormat {
	case "text":
		a.log = slog.New(slog.NewTextHandler(a.stderr, opts))
	case "json":
		a.log = slog.New(slog.NewJSONHandler(a.stderr, opts))
	default:
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--log-format %q is not valid (valid: text, json)", a.logFormat)}
	}
	// What the client libraries would print to stderr by themselves goes to this log, at
	// debug level (before any client connects: gRPC's logger is replaced only once).
	liblog.Route(a.log)
	return nil
}

// isTerminal reports whether w is a terminal (progress bars only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// loadSpec reads and validates a spec file against the vocabulary of the platforms ps.
func loadSpec(path string, ps map[string]platform.Platform) (*spec.Experiment, []byte, error) {
	// A regular file only (a FIFO or a device would block or never end), at most 1 MiB,
	// checked before and while reading.
	data, err := safefile.Read(path, safefile.Rule{Max: spec.MaxSpecBytes})
	if err != nil {
		return nil, nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("%w (valid: a spec file of at most 1 MiB)", err)}
	}
	e, err := spec.Parse(data, path, builtin.Vocabulary(ps))
	if err != nil {
		return nil, nil, err
	}
	builtin.Configure(ps, e)
	return e, data, nil
}
