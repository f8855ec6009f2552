package placement

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Scheduling policies of the client (placement.clientPolicy).
const (
	// PolicyNormal leaves the client under the kernel's default policy (SCHED_OTHER), competing
	// for the CPU with the database like any other process. The default.
	PolicyNormal = "normal"
	// PolicyIdle runs the client's threads under SCHED_IDLE: the client only gets a CPU that
	// nothing else wants, and a CPU that runs only the client counts as idle when the kernel
	// places a task it wakes. A database process woken by the client's request therefore runs
	// on the client's own CPU instead of another one, and the two take turns there instead of
	// running side by side (on the development VM, whose two virtual CPUs share a core, that
	// halves the client's CPU per PostgreSQL read; docs/performance.md). The price: anything
	// else that wants the CPU — a CPU-hungry neighbour, another job on the host — starves the
	// client, and its latency then includes the wait. The client_waited_for_cpu check
	// (package check) flags runs where that happened.
	PolicyIdle = "idle"
)

// Policies lists the valid values of placement.clientPolicy.
var Policies = []string{PolicyNormal, PolicyIdle}

// SetPolicy gives every thread of this process the scheduling policy named (PolicyNormal
// changes nothing) and returns the function that puts every thread back under the policy it
// had; threads created meanwhile get the main thread's former policy. Child processes started
// meanwhile inherit the policy of the thread that starts them.
func SetPolicy(policy string) (restore func() error, err error) {
	noop := func() error { return nil }
	switch policy {
	case "", PolicyNormal:
		return noop, nil
	case PolicyIdle:
	default:
		return noop, fmt.Errorf("placement.clientPolicy %q: valid values are %v", policy, Policies)
	}
	saved := map[int]unix.SchedAttr{}
	err = eachThread(func(tid int) error {
		old, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			return err
		}
		saved[tid] = *old
		return unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0)
	})
	restore = func() error {
		main, ok := saved[os.Getpid()]
		if !ok {
			main = unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
		}
		return eachThread(func(tid int) error {
			attr, ok := saved[tid]
			if !ok {
				attr = main
			}
			attr.Size = unix.SizeofSchedAttr
			return unix.SchedSetAttr(tid, &attr, 0)
		})
	}
	if err != nil {
		_ = restore()
		return noop, fmt.Errorf("set the client's scheduling policy to %s: %w", policy, err)
	}
	return restore, nil
}

// Policy names the scheduling policy of thread tid (0: the calling thread) as /proc shows it:
// "normal", "batch", "idle", "fifo", "rr", "deadline" or a number.
func Policy(tid int) (string, error) {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return "", err
	}
	switch attr.Policy {
	case unix.SCHED_NORMAL:
		return PolicyNormal, nil
	case unix.SCHED_BATCH:
		return "batch", nil
	case unix.SCHED_IDLE:
		return PolicyIdle, nil
	case unix.SCHED_FIFO:
		return "fifo", nil
	case unix.SCHED_RR:
		return "rr", nil
	case unix.SCHED_DEADLINE:
		return "deadline", nil
	}
	return fmt.Sprint(attr.Policy), nil
}
