package platform

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Undo is the end of a failed Provision: it tears the half-made box down (even when ctx was
// cancelled) and adds the end of the server's log to err, so the caller sees why the server
// did not come up.
func Undo(ctx context.Context, b Box, err error) error {
	tail := b.LogTail(4096)
	tctx, cancel := TeardownContext(ctx)
	defer cancel()
	err = errors.Join(err, b.Teardown(tctx))
	if tail != "" {
		err = fmt.Errorf("%w\nserver log (tail):\n%s", err, tail)
	}
	return err
}

// TeardownTimeout bounds one box's teardown: a box whose engine stopped answering or whose
// server will not die is left for `doctor --cleanup`, and the experiment goes on.
const TeardownTimeout = 2 * time.Minute

// TeardownContext is the context a teardown runs under: the caller's cancellation (Ctrl-C)
// does not cut it short, but it has a deadline, the caller's if sooner and not yet passed,
// else TeardownTimeout from now.
func TeardownContext(ctx context.Context) (context.Context, context.CancelFunc) {
	limit := time.Now().Add(TeardownTimeout)
	if d, ok := ctx.Deadline(); ok && ctx.Err() == nil && d.Before(limit) {
		limit = d
	}
	return context.WithDeadline(context.WithoutCancel(ctx), limit)
}

// StopBeforeTeardown is a teardown's first step: stop the server within timeout. A server that
// did not stop in time is not an error here; the teardown goes on to kill what is left.
func StopBeforeTeardown(ctx context.Context, stop func(context.Context) error, timeout time.Duration) error {
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := stop(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
