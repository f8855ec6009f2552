package spec

import (
	"fmt"
	"sort"
	"strings"
)

func sortedKeys[V any](m map[string]V) []string {
	n := make([]string, 0, len(m))
	for k := range m {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// SortedKeys returns a map's keys sorted, for stable messages.
func SortedKeys(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// listCut joins up to 20 values and says how many more there are: a message names what is
// valid without repeating a list of thousands.
func listCut(vs []string) string {
	if len(vs) <= 20 {
		return strings.Join(vs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(vs[:20], ", "), len(vs)-20)
}
