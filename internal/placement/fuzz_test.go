package placement

import (
	"strings"
	"testing"
)

// FuzzParseList: whatever the text, ParseList returns at most MaxCPU sorted, distinct cpus
// below MaxCPU (a list of wide ranges is never expanded beyond that), or an error that quotes
// at most a cut of the text.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0", "0-3", "0,2-3", "5-1", "0-99999", "12345678901234567890", "-1", "0-4095,0-4095", "1,,2", "0-", strings.Repeat("0-4095,", 100) + "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseList(s)
		if err != nil {
			if len(err.Error()) > 400 { // 40 bytes quoted (at most 4 characters each) and the explanation
				t.Fatalf("a message of %d bytes", len(err.Error()))
			}
			return
		}
		if len(cpus) > MaxCPU {
			t.Fatalf("%d cpus", len(cpus))
		}
		for i, c := range cpus {
			if c < 0 || c >= MaxCPU || (i > 0 && cpus[i-1] >= c) {
				t.Fatalf("cpus %v", cpus)
			}
		}
	})
}
