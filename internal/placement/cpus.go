package placement

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxCPU bounds cpu numbers: the kernel's cpu lists and boxbench's affinity masks (unix.CPUSet)
// stop at 4096 cpus.
const MaxCPU = 4096

// ParseList reads a cpu list as the kernel writes them ("0", "0-3", "0,2-3") into sorted,
// distinct cpu numbers. Numbers are checked before any range is expanded, and a range only
// marks a set of MaxCPU cpus, so no list — however long, however wide its ranges — makes more
// than MaxCPU numbers.
func ParseList(s string) ([]int, error) {
	var seen [MaxCPU]bool
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := cpuNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("%s is not a cpu list (write it like 0 or 0-1 or 0,2)", quoteCut(s))
		}
		b := a
		if isRange {
			if b, err = cpuNumber(hi); err != nil || b < a {
				return nil, fmt.Errorf("%s is not a cpu list (a range runs low-high, like 0-3, each number below %d)", quoteCut(s), MaxCPU)
			}
		}
		if a >= MaxCPU || b >= MaxCPU {
			return nil, fmt.Errorf("%s names cpu %d (valid: below %d)", quoteCut(s), max(a, b), MaxCPU)
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	var out []int
	for c, ok := range seen {
		if ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// cpuNumber reads one cpu number: digits only (no sign, no spaces), at most 9 of them, so
// 20-digit numbers are refused instead of wrapping.
func cpuNumber(s string) (int, error) {
	if s == "" || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a cpu number", s)
	}
	return strconv.Atoi(s)
}

// quoteCut quotes a list for a message, cut to 40 characters with its length said.
func quoteCut(s string) string {
	if len(s) <= 50 {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%q… (%d characters in all)", s[:40], len(s))
}

// FormatList writes cpus as a compact cpu list ("0-2,5").
func FormatList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// HostCPUs lists the cpus this process was given when it started (its affinity mask then,
// which is what a cpuset can give a box: a container engine or cgroup refuses cpus outside the
// parent's set), falling back to /sys/devices/system/cpu/online. It is read once, before Pin
// narrows the process to placement.client.
func HostCPUs() []int { return append([]int(nil), startCPUs...) }

var startCPUs = OwnCPUs()

// OwnCPUs lists the cpus this process may run on now (after Pin: the client's), falling back
// to /sys/devices/system/cpu/online.
func OwnCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil && set.Count() > 0 {
		var out []int
		for c := 0; c < 4096 && len(out) < set.Count(); c++ {
			if set.IsSet(c) {
				out = append(out, c)
			}
		}
		return out
	}
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil
	}
	out, _ := ParseList(strings.TrimSpace(string(b)))
	return out
}

// Sets are the disjoint cpu sets of one experiment's processes (placement.client, .server,
// .neighbours), each nil when not pinned.
type Sets struct {
	Client, Server, Neighbours []int
}

// Problem is one reason a placement cannot be used: the spec field, its value, and why.
type Problem struct {
	Field, Value, Message string
}

// Check validates placement values against the host's cpus (host: as HostCPUs returns; nil
// skips the host checks). It returns the parsed sets and every problem at once: a list that is
// not a cpu list, a cpu the host does not have (with the valid range), sets that overlap, a
// server placement without a client one (the client would run on the server's cpus).
func Check(client, server, neighbours string, host []int) (Sets, []Problem) {
	var s Sets
	var problems []Problem
	add := func(field, value, format string, a ...any) {
		problems = append(problems, Problem{Field: field, Value: value, Message: fmt.Sprintf(format, a...)})
	}
	parse := func(field, v string) []int {
		if v == "" {
			return nil
		}
		cpus, err := ParseList(v)
		if err != nil {
			add(field, v, "%v", err)
			return nil
		}
		if host != nil {
			if missing := Missing(cpus, host); len(missing) > 0 {
				add(field, v, "%s names cpu %s, which this host does not offer: it has %d cpus (valid: cpus within %s)",
					quoteCut(v), FormatList(missing), len(host), FormatList(host))
			}
		}
		return cpus
	}
	s.Client = parse("placement.client", client)
	s.Server = parse("placement.server", server)
	s.Neighbours = parse("placement.neighbours", neighbours)
	named := []struct {
		field, value string
		cpus         []int
	}{{"placement.client", client, s.Client}, {"placement.server", server, s.Server}, {"placement.neighbours", neighbours, s.Neighbours}}
	for i := range named {
		for j := i + 1; j < len(named); j++ {
			if shared := intersect(named[i].cpus, named[j].cpus); len(shared) > 0 {
				add(named[j].field, named[j].value, "%s shares cpu %s with %s %s: client, server and neighbours need disjoint cpu sets",
					quoteCut(named[j].value), FormatList(shared), named[i].field, quoteCut(named[i].value))
			}
		}
	}
	if server != "" && client == "" {
		add("placement.server", server, "needs placement.client too: an unpinned client runs on the server's cpus (e.g. client: %q)", suggestOther(s.Server, host))
	}
	if neighbours != "" && server == "" {
		add("placement.neighbours", neighbours, "needs placement.server too: an unpinned server runs on the neighbours' cpus")
	}
	return s, problems
}

// Missing returns the cpus of cpus that host lacks.
func Missing(cpus, host []int) []int {
	on := make(map[int]bool, len(host))
	for _, c := range host {
		on[c] = true
	}
	var out []int
	for _, c := range cpus {
		if !on[c] {
			out = append(out, c)
		}
	}
	return out
}

func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// suggestOther names a host cpu outside used, for advice ("0" without a host).
func suggestOther(used, host []int) string {
	for _, c := range host {
		if !slices.Contains(used, c) {
			return strconv.Itoa(c)
		}
	}
	return "0"
}
