package runner

import (
	"context"
	"errors"
	"fmt"
	"github.com/boxbench/boxbench/internal/storage"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/boxbench/boxbench/internal/resource"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/recovery"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

// neighbour is one co-located box running its own workload beside the measured database.
type neighbour struct {
	name string
	spec *spec.Neighbour
	box  platform.Box
	wl   workload.Workload

	wg  sync.WaitGroup
	res *workload.Result
	err error
}

// source names a neighbour's telemetry.
func (n *neighbour) source() string { return "neighbour:" + n.name }

// provisionNeighbours starts the cell's neighbour boxes (idle: no database, only a sleeping
// process) once the measured database is ready. Their workloads start later, with the
// measured workload. On error every box made so far has been torn down.
func (r *Runner) provisionNeighbours(ctx context.Context, c *plan.Cell, d dbms.DBMS, victim platform.Box, dir string, seq int, window time.Duration) ([]*neighbour, error) {
	if c.Neighbour == "" || c.Neighbour == "none" {
		return nil, nil
	}
	ns := r.cfg.Spec.Neighbours[c.Neighbour]
	n := &neighbour{name: c.Neighbour, spec: ns}
	wl, err := r.cfg.Neighbours(ns, window)
	if err != nil {
		return nil, fmt.Errorf("neighbour %s: %w", n.name, err)
	}
	n.wl = wl
	pname := ns.Platform
	if pname == "" {
		pname = c.Platform
	}
	p := r.cfg.Platforms[pname]
	if p == nil {
		return nil, fmt.Errorf("neighbour %s: platform %s is not available", n.name, pname)
	}
	st, opts := ns.Storage, r.storageOpts()
	if st == spec.NeighbourStorageShared {
		root, err := r.sharedRoot(victim)
		if err != nil {
			return nil, fmt.Errorf("neighbour %s: storage shared: %w", n.name, err)
		}
		st, opts.BindWithin = storage.Bind, root
	}
	if st == "" || st == "same" {
		st = c.Storage // same kind: bind shares the host filesystem, blockdev gets its own
		if eq := p.Info().Fallback[st]; eq != "" {
			st = eq // the neighbour's platform lacks it: its closest equivalent
		}
	}
	run := fmt.Sprintf("%s-nb-%s", runDirName(seq), n.name)
	lim := ns.Limits.Resources()
	if cpus := r.cfg.Spec.Placement.Neighbours; cpus != "" {
		lim.Cpuset = cpus // placement.neighbours, through the same limit as the server's
	}
	box, err := p.Provision(ctx, platform.Request{Experiment: r.id, Run: run, WorkDir: dir + "/" + run,
		DBMS: dbms.Idle(d), Choice: platform.Choice{Storage: st, Network: "host", Runtime: c.Runtime},
		Resources:   lim,
		StorageOpts: opts, Log: r.cfg.Log})
	if err != nil {
		return nil, fmt.Errorf("neighbour %s: %w", n.name, err)
	}
	n.box = box
	// Files are laid out now, before the measured window, not during it.
	if layout := wl.Traits().Layout; layout != nil {
		if err := layout(ctx, workload.Target{Box: box, DataDir: box.DataDir(), Log: r.cfg.Log}); err != nil {
			return []*neighbour{n}, fmt.Errorf("neighbour %s: %w", n.name, err)
		}
	}
	return []*neighbour{n}, nil
}

// start runs the neighbour's workload in the background.
func (n *neighbour) start(ctx context.Context, clk workload.Clock, log interface{ Warn(string, ...any) }) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		t := workload.Target{Box: n.box, DataDir: n.box.DataDir()}
		n.err = recovery.Call("neighbour "+n.name, func() (err error) {
			n.res, err = n.wl.Run(ctx, t, clk)
			return err
		})
		if n.err != nil {
			log.Warn("neighbour failed", "neighbour", n.name, "err", n.err)
		}
	}()
}

func (n *neighbour) wait() { n.wg.Wait() }

func teardownNeighbours(ctx context.Context, ns []*neighbour) error {
	var errs []error
	for _, n := range ns {
		if n.box != nil {
			errs = append(errs, n.box.Teardown(ctx))
		}
	}
	return errors.Join(errs...)
}

// shareMetrics compares the share of I/O and CPU the measured database obtained over the
// measured window with the share its weights configured. Shares are computed from each
// source's per-interval rates summed over the window (equal intervals), so they are the
// shares of bytes and CPU-seconds.
func shareMetrics(samples []telemetry.Sample, after time.Duration, victim resource.Limits, ns []*neighbour) map[string]float64 {
	if len(ns) == 0 {
		return nil
	}
	sum := func(source string, metrics ...string) (float64, bool) {
		total, seen := 0.0, false
		for _, s := range samples {
			if s.Source != source || s.T <= after {
				continue
			}
			for _, m := range metrics {
				if s.Metric == m {
					total += s.Value
					seen = true
				}
			}
		}
		return total, seen
	}
	weight := func(w int) float64 {
		if w == 0 {
			return 100 // the kernel default on cgroup v2's scale
		}
		return float64(w)
	}
	out := map[string]float64{}
	for _, k := range []struct {
		name    string
		metrics []string
		wv      int
		wn      func(*neighbour) int
	}{
		{"io", []string{"io_read_bytes_per_second", "io_write_bytes_per_second"}, victim.IOWeight, func(n *neighbour) int { return n.spec.Limits.IOWeight }},
		{"cpu", []string{"cpu_usage_seconds_per_second"}, victim.CPUWeight, func(n *neighbour) int { return n.spec.Limits.CPUWeight }},
	} {
		v, ok := sum("db", k.metrics...)
		total, wsum := v, weight(k.wv)
		for _, n := range ns {
			x, seen := sum(n.source(), k.metrics...)
			ok = ok && seen
			total += x
			wsum += weight(k.wn(n))
			out["neighbours_"+unitOf(k.name)] += x
		}
		out[results.ShareMetric(k.name, false)] = weight(k.wv) / wsum
		if ok && total > 0 {
			out[results.ShareMetric(k.name, true)] = v / total
		}
	}
	return out
}

// unitOf names the neighbours' summed rate of a resource: the sum over the window's intervals
// of their bytes/s or cores, the denominator's other half of the obtained share.
func unitOf(kind string) string {
	if kind == "io" {
		return "io_bytes_per_second_sum"
	}
	return "cpu_seconds_per_second_sum"
}

// sharedRoot is the storage root of the victim's data directory (<root>/db on the host), for a
// neighbour whose data shares its file system: it must lie under the work root, where boxbench
// made it, and hold the data directory boxbench laid out.
func (r *Runner) sharedRoot(victim platform.Box) (string, error) {
	data := victim.Observe().DataDir
	if data == "" || filepath.Base(data) != "db" {
		return "", fmt.Errorf("the database's data directory is not a directory of boxbench's on this host (%q): only host-side storage (bind, tmpfs, blockdev) can be shared", data)
	}
	root := filepath.Dir(data)
	rel, err := filepath.Rel(r.cfg.WorkRoot, root)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("the database's storage root %s is not under the work root %s", root, r.cfg.WorkRoot)
	}
	return root, nil
}
