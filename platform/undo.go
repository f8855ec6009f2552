package platform

import (
	"context"
	"errors"
	"fmt"
)

// Undo is the end of a failed Provision: it tears the half-made box down (even when ctx was
// cancelled) and adds the end of the server's log to err, so the caller sees why the server
// did not come up.
func Undo(ctx context.Context, b Box, err error) error {
	tail := b.LogTail(4096)
	err = errors.Join(err, b.Teardown(context.WithoutCancel(ctx)))
	if tail != "" {
		err = fmt.Errorf("%w\nserver log (tail):\n%s", err, tail)
	}
	return err
}
