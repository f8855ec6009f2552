package placement

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseCPUs reads a cpu list ("0", "0-1", "0,2-3") into its cores, in the order written.
func ParseCPUs(list string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: %q is not a core number", list, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 4096 {
				return nil, fmt.Errorf("cpu list %q: %q is not a range", list, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
