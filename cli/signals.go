package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// Signals that end boxbench through teardown: Ctrl-C, kill, a dropped ssh session (SIGHUP)
// and Ctrl-\ (SIGQUIT, which would otherwise dump goroutines and exit without teardown).
var teardownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// ForceGrace is how long teardown may still take after a second signal before boxbench exits.
const ForceGrace = 30 * time.Second

// Run is the process entry point: Main with the teardown signals handled. The first signal
// ends a command that has started nothing at once (onlyReading); otherwise it cancels the
// context (run: the current run is torn down and not stored; see stopping for the others); a
// second one gives the teardown ForceGrace more, then exits with ExitInterrupted; a third
// exits at once.
func Run(args []string, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, teardownSignals...)
	defer signal.Stop(sigs)
	ctx, stop := handleSignals(context.Background(), sigs, stderr, ForceGrace, os.Exit)
	defer stop()
	return Main(ctx, args, stdout, stderr)
}

// handleSignals returns a context cancelled by the first signal on sigs. After a second
// signal, exit(ExitInterrupted) is called when grace passes (or at a third signal), with a
// message saying how to remove what a cut-short teardown may have left. stop ends the watch.
func handleSignals(parent context.Context, sigs <-chan os.Signal, stderr io.Writer, grace time.Duration, exit func(int)) (context.Context, func()) {
	current := new(atomic.Pointer[phase])
	ctx, cancel := context.WithCancel(context.WithValue(parent, phaseKey{}, current))
	done := make(chan struct{})
	forced := func(why string) {
		fmt.Fprintf(stderr, "\n%s: exiting without finishing teardown; boxes, mounts or servers may be left behind: run boxbench doctor --cleanup\n", why)
		exit(ExitInterrupted)
	}
	go func() {
		var first os.Signal
		select {
		case first = <-sigs:
		case <-done:
			return
		}
		switch p := current.Load(); {
		case p != nil && p.atOnce:
			// Reading, validating and planning start nothing: there is nothing to tear
			// down, and a long read must not carry on after the user asked to stop.
			fmt.Fprintf(stderr, "\nreceived %v while %s: stopped; nothing had been started\n", first, p.what)
			exit(ExitInterrupted)
			return
		case p != nil:
			fmt.Fprintf(stderr, "\nreceived %v while %s: stopping once %s (send it again to force an exit after %s)\n", first, p.what, p.until, grace)
		default:
			fmt.Fprintf(stderr, "\nreceived %v: tearing down the current run (send it again to force an exit after %s)\n", first, grace)
		}
		cancel()
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintf(stderr, "\nsecond signal: teardown has %s more, then boxbench exits (a third signal exits now)\n", grace)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			forced(fmt.Sprintf("teardown took longer than %s", grace))
		case s := <-sigs:
			forced(fmt.Sprintf("received %v a third time", s))
		case <-done:
		}
	}()
	var once bool
	return ctx, func() {
		if !once {
			once = true
			close(done)
			cancel()
		}
	}
}

type phaseKey struct{}

// phase is what the command is doing, for the message a signal prints and what it does: with
// atOnce nothing has been started and the first signal exits; otherwise the context is
// cancelled and the command stops once until holds (what it started is removed).
type phase struct {
	what, until string
	atOnce      bool
}

// nothingStarted marks, in a context made by handleSignals, that what follows (reading and
// validating a spec, planning) starts nothing, so a signal ends boxbench at once; the function
// returned ends that phase, before anything is started. Without handleSignals it does nothing.
func nothingStarted(ctx context.Context) (started func()) {
	return enter(ctx, phase{what: "reading the spec", atOnce: true})
}

// onlyReading is nothingStarted for a command that reads and prints, and starts nothing
// (report, compare, results, plan, doctor's checks of files, version): what names the reading
// in the message a signal prints.
func onlyReading(ctx context.Context, what string) (done func()) {
	return enter(ctx, phase{what: what, atOnce: true})
}

// stopping marks a phase that has started something it must remove (doctor's runtime probes,
// doctor --cleanup's removals): a signal cancels ctx, and the command ends once until holds
// and returns interrupted(ctx, …). The function returned ends the phase.
func stopping(ctx context.Context, what, until string) (done func()) {
	return enter(ctx, phase{what: what, until: until})
}

func enter(ctx context.Context, p phase) func() {
	cur, _ := ctx.Value(phaseKey{}).(*atomic.Pointer[phase])
	if cur == nil {
		return func() {}
	}
	prev := cur.Swap(&p)
	return func() { cur.Store(prev) }
}

// interrupted is the error a command that was stopped by a signal (see stopping) returns: exit
// status 130 with what is true of what it did.
func interrupted(what string) error {
	return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: %s", what)}
}
