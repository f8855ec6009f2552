// Package prereq names what this host lacks for a cell that one command makes: a root
// filesystem or an engine image not built yet, a database's Debian packages not installed. A
// platform's Check returns such a lack as an *Error (beside its other reasons, errors.Join), and
// the planner tells it from a reason that no command removes (Split): the cell is planned as it
// will run once the command has run, and the command is listed as the plan's prerequisite, with
// an estimate of its time. `run` refuses a plan with an unmet prerequisite before it starts
// anything, naming the command.
//
// Layer (docs/architecture.md): a leaf — it imports no other package of boxbench, so the image
// builders, the databases' contract and the platforms all return its errors.
package prereq

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Typical labels an estimate that is no record of this host's: a figure measured on a 2-vCPU
// machine (docs/ci.md), stated as such.
const Typical = "typical on a 2-vCPU host"

// Need is one thing this host lacks and the command that makes it.
type Need struct {
	// What is missing, as a clause without a final stop ("mariadb's root filesystem is not
	// built").
	What string
	// Command is the exact command that makes it, as the user types it.
	Command string
	// Takes is an estimate of Command's wall time; 0 when there is none.
	Takes time.Duration
	// Basis says where Takes comes from: a record of this host's ("its last build here") or
	// Typical.
	Basis string
}

// String is the need in one line: what, the command, and the estimate when there is one.
func (n Need) String() string {
	s := fmt.Sprintf("%s: `%s`", n.What, n.Command)
	if e := n.Estimate(); e != "" {
		s += " (" + e + ")"
	}
	return s
}

// Estimate is "about 2 min, typical on a 2-vCPU host", or "" without an estimate.
func (n Need) Estimate() string {
	if n.Takes <= 0 {
		return ""
	}
	s := "about " + About(n.Takes)
	if n.Basis != "" {
		s += ", " + n.Basis
	}
	return s
}

// About rounds d for people: seconds to the nearest 10 under 90 s, whole minutes above.
func About(d time.Duration) string {
	if d < 90*time.Second {
		s := max(10, int(math.Round(d.Seconds()/10))*10)
		return fmt.Sprintf("%d s", s)
	}
	return fmt.Sprintf("%d min", int(math.Round(d.Minutes())))
}

// Error is a check's answer "not yet": the choice runs here once Need's command has run. Err is
// the underlying error (rootfs.ErrNotBuilt …), whose text the error keeps; nil: Need says it.
type Error struct {
	Need Need
	Err  error
}

// New returns the error of n, wrapping err (nil: none).
func New(n Need, err error) *Error { return &Error{Need: n, Err: err} }

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Need.String()
	}
	msg := e.Err.Error()
	if !strings.Contains(msg, e.Need.Command) {
		msg += ": run `" + e.Need.Command + "`"
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Split separates a check's error into the needs it carries and the rest: rest is nil when
// every reason of err is a need (the choice runs once the needs are met), else err itself, whole,
// as the reason the choice cannot run here. It looks through errors.Join and through errors
// that wrap one error (context added with %w), never into an *Error's own Err.
func Split(err error) (needs []Need, rest error) {
	if err == nil {
		return nil, nil
	}
	switch x := err.(type) {
	case *Error:
		return []Need{x.Need}, nil
	case interface{ Unwrap() []error }:
		hard := false
		for _, sub := range x.Unwrap() {
			n, r := Split(sub)
			needs = append(needs, n...)
			hard = hard || r != nil
		}
		if hard {
			return needs, err
		}
		return needs, nil
	case interface{ Unwrap() error }:
		if n, r := Split(x.Unwrap()); r == nil && len(n) > 0 {
			return n, nil
		}
	}
	return nil, err
}

// Join is an error of needs (each an *Error without Err), nil when there is none.
func Join(needs []Need) error {
	errs := make([]error, len(needs))
	for i, n := range needs {
		errs[i] = New(n, nil)
	}
	return errors.Join(errs...)
}

// Merge lists needs once each, by command, in the order first seen.
func Merge(lists ...[]Need) []Need {
	var out []Need
	seen := map[string]bool{}
	for _, l := range lists {
		for _, n := range l {
			if !seen[n.Command] {
				seen[n.Command] = true
				out = append(out, n)
			}
		}
	}
	return out
}
