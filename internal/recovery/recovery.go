// Package recovery turns a panic in one of a run's goroutines into an error that carries the
// panic's value and the stack of the goroutine that panicked, so that the run fails with a
// reason instead of the process ending without teardown. Every goroutine boxbench starts for
// a run (the runner's execute, neighbours, the telemetry sampler, the generator's workers)
// goes through this one helper.
//
// Layer (docs/architecture.md): a leaf — it imports no other package of boxbench, so any
// package may import it.
package recovery

import (
	"fmt"
	"runtime/debug"
)

// Error is a recovered panic.
type Error struct {
	Where string // what was running: "ycsb worker 3", "telemetry sampler"
	Value any    // what was passed to panic
	Stack string // the panicking goroutine's stack
}

func (e *Error) Error() string {
	return fmt.Sprintf("panic in %s: %v\n%s", e.Where, e.Value, e.Stack)
}

// Recover must be deferred directly (defer recovery.Recover("sampler", &err)); when the
// function panics, it stores the panic as an *Error in *errp (replacing any error already
// there) and the function returns normally.
func Recover(where string, errp *error) {
	if v := recover(); v != nil {
		*errp = &Error{Where: where, Value: v, Stack: string(debug.Stack())}
	}
}

// Call runs f and returns its error, or its panic as an *Error.
func Call(where string, f func() error) (err error) {
	defer Recover(where, &err)
	return f()
}
