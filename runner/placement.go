package runner

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pinClient pins every thread of this process (the load generator) to the cpu list, so the
// client runs on the same cores for every cell; threads created later and child processes
// (sysbench) inherit the mask. It returns the applied list as the kernel reports it.
func pinClient(cpus string) (string, error) {
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
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return "", err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return "", fmt.Errorf("pin the client to cpus %s: %w", cpus, err)
		}
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
