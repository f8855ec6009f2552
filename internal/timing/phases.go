// Package timing says where the time of a set-up and test run went: the phases the scripts
// record (apt, builds from the module proxy, images, guest images, the Kubernetes build, the
// cluster) and every package's and every slow test's wall time from `go test -json`.
// scripts/timing is its command; scripts/setup.sh and scripts/test.sh feed it.
//
// Layer (docs/architecture.md): a leaf — it imports no other package of boxbench, so any
// package may import it.
package timing

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Phase is one timed step of a run, as scripts/timed.sh appends it to the timing log: one line
// "START_UNIX_SECONDS<TAB>WALL_SECONDS<TAB>EXIT_STATUS<TAB>NAME<TAB>CPU_SECONDS" per phase,
// written when it ends (logs before the cpu column have four fields). Phases may overlap (they
// run in parallel); the start tells which did.
type Phase struct {
	Name  string
	Start time.Time
	Wall  time.Duration
	Exit  int // the phase's exit status; 0 is success
	// CPU is the user + system time of the processes the phase waited for (not of a daemon's
	// or a container's); negative when the log did not record it.
	CPU time.Duration
}

// End is when the phase ended.
func (p Phase) End() time.Time { return p.Start.Add(p.Wall) }

// ParsePhases reads a timing log. A line that is not a phase (a comment, a torn last line of a
// killed run) is skipped and counted, never fatal: the report is printed on failure too.
func ParsePhases(r io.Reader) (phases []Phase, skipped int, err error) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		line := s.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if (len(f) != 4 && len(f) != 5) || f[3] == "" {
			skipped++
			continue
		}
		start, err1 := strconv.ParseFloat(f[0], 64)
		wall, err2 := strconv.ParseFloat(f[1], 64)
		exit, err3 := strconv.Atoi(f[2])
		cpu, err4 := -1.0, error(nil)
		if len(f) == 5 {
			cpu, err4 = strconv.ParseFloat(f[4], 64)
		}
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || wall < 0 {
			skipped++
			continue
		}
		sec := int64(start)
		phases = append(phases, Phase{Name: f[3], Start: time.Unix(sec, int64((start-float64(sec))*1e9)),
			Wall: time.Duration(wall * float64(time.Second)), Exit: exit, CPU: seconds(cpu)})
	}
	if err := s.Err(); err != nil {
		return phases, skipped, fmt.Errorf("read timing log: %w", err)
	}
	return phases, skipped, nil
}

// seconds is s seconds as a duration; a negative s (not recorded) stays negative.
func seconds(s float64) time.Duration {
	if s < 0 {
		return -1
	}
	return time.Duration(s * float64(time.Second))
}
