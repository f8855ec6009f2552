package timing

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Report is where the time of a run went.
type Report struct {
	Phases  []Phase
	Results []Result      // from go test -json; empty when the run ended before the tests
	Slow    time.Duration // tests at least this long are listed one by one
	Module  string        // dropped from package names, so that the tables fit a terminal
}

// Write prints the phases in the order they started with their offset from the first, then
// every package's wall time (the test binary's run, slowest first), then the tests slower than
// r.Slow. Every figure is wall-clock time of one run (n = 1), in seconds or minutes as shown, but
// the phases' cpu column: the cpu time of the processes each phase waited for.
func (r Report) Write(w io.Writer) {
	fmt.Fprintln(w, "== where the time went (wall clock and cpu time, one run; phases overlap when they ran in parallel) ==")
	if len(r.Phases) == 0 {
		fmt.Fprintln(w, "no phases recorded")
	} else {
		ph := append([]Phase(nil), r.Phases...)
		sort.SliceStable(ph, func(i, j int) bool { return ph[i].Start.Before(ph[j].Start) })
		first, last := ph[0].Start, ph[0].End()
		width := len("phase")
		for _, p := range ph {
			width = max(width, len(p.Name))
			if p.End().After(last) {
				last = p.End()
			}
		}
		fmt.Fprintf(w, "%-*s  %8s  %9s  %9s  %s\n", width, "phase", "start", "wall", "cpu", "status")
		for _, p := range ph {
			status := "ok"
			if p.Exit != 0 {
				status = fmt.Sprintf("FAILED (exit %d)", p.Exit)
			}
			cpu := "-"
			if p.CPU >= 0 {
				cpu = clock(p.CPU)
			}
			fmt.Fprintf(w, "%-*s  %8s  %9s  %9s  %s\n", width, p.Name, "+"+clock(p.Start.Sub(first)), clock(p.Wall), cpu, status)
		}
		fmt.Fprintf(w, "%-*s  %8s  %9s  %9s  (first start %s UTC to last end)\n", width, "all phases", "", clock(last.Sub(first)), "",
			first.UTC().Format("2006-01-02 15:04:05"))
		fmt.Fprintln(w, "(cpu: user + system time of the processes each phase waited for — compilers, test binaries, QEMU — not of daemons or containers; setup/total includes setup's phases)")
	}
	var pkgs, slow []Result
	for _, res := range r.Results {
		switch {
		case res.Test == "" && res.Action != "skip":
			pkgs = append(pkgs, res)
		case res.Test != "" && r.Slow > 0 && res.Elapsed >= r.Slow:
			slow = append(slow, res)
		}
	}
	if len(pkgs) > 0 {
		fmt.Fprintf(w, "\npackages (%d with tests; wall time of each test binary, slowest first):\n", len(pkgs))
		writeResults(w, pkgs, r.Module)
	}
	if len(slow) > 0 {
		fmt.Fprintf(w, "\ntests of %s or more (a parent includes its subtests; parallel tests overlap):\n", clock(r.Slow))
		writeResults(w, slow, r.Module)
	}
}

func writeResults(w io.Writer, rs []Result, module string) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Elapsed > rs[j].Elapsed })
	names := make([]string, len(rs))
	width := 0
	for i, r := range rs {
		names[i] = strings.TrimSpace(shortPackage(module, r.Package) + " " + r.Test)
		width = max(width, len(names[i]))
	}
	for i, r := range rs {
		mark := ""
		if r.Action == "fail" {
			mark = "  FAIL"
		}
		fmt.Fprintf(w, "  %-*s  %9s%s\n", width, names[i], clock(r.Elapsed), mark)
	}
}

// clock renders a duration as seconds below two minutes ("73.4s") and as minutes and seconds
// above ("12m05s"), so that long and short phases read at a glance.
func clock(d time.Duration) string {
	if d < 2*time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// shortPackage drops the module path, so that the table fits a terminal.
func shortPackage(module, pkg string) string {
	if rest, ok := strings.CutPrefix(pkg, module+"/"); ok {
		return rest
	}
	return pkg
}
