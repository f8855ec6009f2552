package spec

import (
	"slices"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/placement"
)

// DefaultQuietTimeout is quietStart.timeout when the spec does not give one.
const DefaultQuietTimeout = 5 * time.Second

// placement checks placement.client, .server and .neighbours against each other and the host's
// cpus (Vocabulary.CPUs), a server cpuset given twice (placement.server and a cpuset limit),
// and whether order: duet can split the cpus on this host.
func (c *checker) placement() {
	e := c.e
	p := e.Placement
	sets, problems := placement.Check(p.Client, p.Server, p.Neighbours, e.vocab.CPUs)
	for _, pr := range problems {
		c.add(pr.Field, "%s", pr.Message)
	}
	if p.Server != "" {
		if e.Limits.Cpuset != "" {
			c.add("placement.server", "%q and limits.cpuset %q both place the server: give one", p.Server, e.Limits.Cpuset)
		}
		if e.varies("cpuset") {
			c.add("placement.server", "%q and the matrix key cpuset both place the server: give one", p.Server)
		}
	}
	if p.Neighbours != "" {
		for _, n := range sortedKeys(e.Neighbours) {
			if nb := e.Neighbours[n]; nb != nil && nb.Limits.Cpuset != "" {
				c.add("placement.neighbours", "%q and neighbours.%s.limits.cpuset %q both place the neighbour: give one", p.Neighbours, n, nb.Limits.Cpuset)
			}
		}
	}
	if p.Duet != "" {
		if e.Order != "duet" {
			c.add("placement.duet", "%q is the layout of order: duet; this spec's order is %q (leave placement.duet out)", p.Duet, e.Order)
		} else if !slices.Contains(placement.DuetLayouts, p.Duet) {
			c.add("placement.duet", "%q is not a layout (valid: %v)", p.Duet, placement.DuetLayouts)
		}
	}
	if e.Order == "duet" && len(problems) == 0 {
		if e.vocab.CPUs != nil && (p.Duet == "" || slices.Contains(placement.DuetLayouts, p.Duet)) {
			if _, _, err := placement.Duet(sets, e.vocab.CPUs, p.Duet); err != nil {
				c.add("order", "%s", err.Error())
			}
		}
		if e.Repetitions.Adaptive() {
			c.add("order", "duet runs a fixed number of pairs: give repetitions as a number, not {min, max}")
		}
		remote := e.vocab.remoteTypes()
		for _, path := range sortedKeys(e.usedWorkloads()) {
			if w := e.usedWorkloads()[path]; w.Type != "" && !slices.Contains(remote, w.Type) {
				c.add("order", "duet runs each side's client as a pinned boxbench agent, which runs only the built-in generator: %s.type %s cannot be a duet's client (valid: %s)", path, w.Type, strings.Join(remote, ", "))
			}
		}
	}
}

func (c *checker) quietStart() {
	q := c.e.QuietStart
	for field, v := range map[string]Percent{"cpuBusy": q.CPUBusy, "diskBusy": q.DiskBusy} {
		if v < 0 || v > 1 {
			c.add("quietStart."+field, "%g%% is out of range (valid: 0%% to 100%%)", float64(v)*100)
		}
	}
	if q.Timeout.D() > time.Hour {
		c.add("quietStart.timeout", "%s is too long (valid: 0s, which turns the wait off, up to 1h)", q.Timeout.D())
	}
	if w := q.Window.D(); w < 200*time.Millisecond || w > time.Minute {
		c.add("quietStart.window", "%s is out of range (valid: 200ms to 1m)", w)
	}
}
