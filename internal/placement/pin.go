package placement

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Pin pins every thread of this process (the load generator) to the cpu list (as in
// placement.client: "0", "0-1", "0,2"), so the client runs on the same cores for every cell.
// It returns the applied list as the kernel reports it.
func Pin(cpus string) (string, error) {
	var set unix.CPUSet
	set.Zero()
	for _, part := range strings.Split(cpus, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return "", fmt.Errorf("placement.client %q: %w", cpus, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return "", fmt.Errorf("placement.client %q: %w", cpus, err)
			}
		}
		for c := a; c <= b; c++ {
			set.Set(c)
		}
	}
	err := eachThread(func(tid int) error { return unix.SchedSetaffinity(tid, &set) })
	if err != nil {
		return "", fmt.Errorf("pin the client to cpus %s: %w", cpus, err)
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(0, &got); err != nil {
		return "", err
	}
	var list []string
	for c := 0; c < 1024; c++ {
		if got.IsSet(c) {
			list = append(list, strconv.Itoa(c))
		}
	}
	return strings.Join(list, ","), nil
}

// eachThread calls f with the id of every thread of this process. A thread that exits meanwhile
// (ESRCH) is skipped.
func eachThread(f func(tid int) error) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := f(tid); err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
	}
	return nil
}
