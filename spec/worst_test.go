package spec

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// worstSpecs are the specs of issue 32's review that made parsing quadratic or exhausted
// memory, each close to MaxSpecBytes.
func worstSpecs() map[string]string {
	const size = MaxSpecBytes - 4096
	fill := func(head string, item func(i int) string, tail string) string {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; b.Len() < size-len(tail)-100; i++ {
			b.WriteString(item(i))
		}
		b.WriteString(tail)
		return b.String()
	}
	// base ends inside matrix:, so each case can add a matrix key, or a top-level section after
	// a line that is not indented.
	const base = "apiVersion: boxbench/v1alpha1\nkind: Experiment\nname: worst\ndbms: postgresql\n" +
		"workload: {type: ycsb, mix: a, threads: 2, duration: 5s}\ndataset: {records: 1000}\nrepetitions: 3\n" +
		"matrix:\n  platform: [native, docker]\n"
	return map[string]string{
		// One key repeated: yaml.v3 reported every equal pair (n²/2).
		"repeated key":              fill(base, func(int) string { return "  platform: [native]\n" }, ""),
		"repeated key, a few times": base + strings.Repeat("limits: {cpus: 1}\n", 200),
		"repeated key in a mapping": fill(base+"limits:\n", func(int) string { return "  cpus: 1\n" }, ""),
		// Distinct unknown keys: yaml.v3 compares every pair of keys, then a "did you mean" each.
		"distinct unknown keys": fill(base, func(i int) string { return fmt.Sprintf("k%d: 1\n", i) }, ""),
		"unknown keys under many workloads": fill(strings.Replace(base, "workload: {type: ycsb, mix: a, threads: 2, duration: 5s}\n", "", 1)+
			"  workload: ["+seq("w", 100)+"]\nworkloads:\n", func(i int) string {
			if i%250 == 0 {
				return fmt.Sprintf("  w%d:\n    type: ycsb\n", i/250)
			}
			return fmt.Sprintf("    tyxe%d: 1\n", i)
		}, ""),
		// Exclude entries over a large matrix.
		"exclude over a large matrix": fill(base+"  runtime: ["+seq("r", 1000)+"]\n  replica: ["+seq("x", 10)+"]\n  exclude:\n",
			func(i int) string { return fmt.Sprintf("  - {runtime: r%d, platform: native}\n", i%1000) }, ""),
		"exclude entries at the list cap": base + "  runtime: [" + seq("r", 1000) + "]\n  replica: [" + seq("x", 10) + "]\n  exclude:\n" +
			strings.Repeat("  - {runtime: r1, platform: native}\n", MaxListItems),
		// Long lists and ranges.
		"long matrix list":               fill(base+"  runtime: [", func(i int) string { return fmt.Sprintf("r%d, ", i) }, "r]\n"),
		"matrix list at the cap":         base + "  runtime: [" + seq("r", MaxListItems) + "]\n",
		"client cpu list of huge ranges": base + "placement: {client: \"" + strings.Repeat("0-4294967295,", 300) + "0\"}\n",
		"cpuset of a huge range":         base + "limits: {cpuset: \"0-99999999999999999999\"}\n",
		"matrix cpuset of huge ranges":   base + "  cpuset: [" + strings.Repeat("\"0-4000000000\", ", 5000) + "\"0\"]\n",
		// Deep nesting, long values, control characters everywhere.
		"deep flow nesting":   base + "description: " + strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000) + "\n",
		"deep block nesting":  base + "x:\n" + deepBlock(300),
		"one huge value":      base + "description: " + strings.Repeat("a", size-len(base)-20) + "\n",
		"control characters":  fill(strings.Replace(base, "type: ycsb, mix: a", "type: fio", 1)+"workload:\n  job:\n", func(i int) string { return fmt.Sprintf("    o%d: \"\\e[2J\"\n", i) }, ""),
		"many invalid values": fill(base+"  mix: [", func(i int) string { return fmt.Sprintf("\"bad\\e%d\", ", i) }, "a]\n"),
		"numeric extremes":    strings.Replace(base, "threads: 2,", "threads: 2, targetRate: 1e-300, loadBatch: -1, loadThreads: 2000000000,", 1),
	}
}

func seq(prefix string, n int) string {
	v := make([]string, n)
	for i := range v {
		v[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return strings.Join(v, ", ")
}

func deepBlock(depth int) string {
	var b strings.Builder
	for i := 0; i < depth; i++ {
		b.WriteString(strings.Repeat(" ", i+1) + "a:\n")
	}
	b.WriteString(strings.Repeat(" ", depth+1) + "b: 1\n")
	return b.String()
}

// TestWorstSpecs: each worst spec of the review is refused with at most MaxProblems problems
// listed (the rest counted), every listed problem short, and the memory allocated while
// parsing within a generous bound (no timing is asserted: the 5 s of the issue is checked by
// hand, see docs/security.md; a quadratic loop shows here as allocations or as a test that
// does not end).
func TestWorstSpecs(t *testing.T) {
	for name, src := range worstSpecs() {
		t.Run(name, func(t *testing.T) {
			if len(src) > MaxSpecBytes {
				t.Fatalf("the generated spec is %d bytes, over the cap", len(src))
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Parse([]byte(src), "worst.yaml", vocab)
			runtime.ReadMemStats(&after)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("want a *spec.Error, got %v", err)
			}
			if len(se.Problems) > MaxProblems {
				t.Errorf("%d problems listed, over MaxProblems", len(se.Problems))
			}
			if n := len(se.Error()); n > 200<<10 {
				t.Errorf("the message is %d bytes", n)
			}
			for _, p := range se.Problems {
				if len(p.String()) > 8<<10 {
					t.Errorf("a problem of %d bytes: %.200s…", len(p.String()), p.String())
				}
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
				t.Errorf("parsing allocated %d MiB", alloc>>20)
			}
			t.Logf("%d problems (+%d), %d MiB allocated; first: %.300s", len(se.Problems), se.More, (after.TotalAlloc-before.TotalAlloc)>>20, firstProblem(se))
		})
	}
}

func firstProblem(e *Error) string {
	if len(e.Problems) == 0 {
		return ""
	}
	return e.Problems[0].String()
}
