package telemetry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/boxbench/boxbench/internal/blockdev"
	"github.com/boxbench/boxbench/internal/recovery"
	"github.com/boxbench/boxbench/workload"
)

// DefaultInterval is the sampling interval the design asks for.
const DefaultInterval = time.Second

// collector reads one group of values of one target. collect adds cumulative counters
// ("*_total") and gauges to r and leaves out what the kernel does not offer; an error means
// the read failed unexpectedly (the cgroup vanished, a file did not parse), not that a value
// is missing. Collectors are used from one goroutine at a time.
type collector interface {
	name() string
	collect(r reading) error
}

// roots says where the proc and sys file systems are; tests point them at captured trees.
// Cgroup trees are found through cgroup.Root.
type roots struct {
	proc string
	sys  string
}

var hostRoots = roots{proc: "/proc", sys: "/sys"}

// series is one collector of one target and its previous reading.
type series struct {
	source string
	c      collector
	prev   reading
	prevT  time.Duration
	errs   int
	first  error
}

// Sampler samples its targets every interval, from Start until Stop.
//
// Contract: call Start once, then Stop once or more (Stop is idempotent and returns the same
// result every time; calling it without Start returns nothing). Start takes the baseline reading
// before it returns, so values cover the time from Start to Stop. Ticks fall on multiples of the
// interval after Clock.Start so samples line up with the workload's intervals. A failed read
// does not stop sampling: it is logged once per collector and reported by Stop, and the values
// of that read are absent. Methods may be called from any goroutine.
type Sampler struct {
	interval time.Duration
	clk      workload.Clock
	log      *slog.Logger
	series   []*series
	missing  []string // "source: what cannot be seen and why"

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
	samples []Sample

	panicked error // set by loop before done is closed

	stopOnce sync.Once
	result   []Sample
	err      error
}

// New checks the targets and prepares their collectors: cgroups and processes must exist and a
// DataDir must exist; a DataDir on no block device (tmpfs) only loses its disk metrics (logged).
// interval <= 0 means DefaultInterval. log may be nil.
func New(targets []Target, interval time.Duration, clk workload.Clock, log *slog.Logger) (*Sampler, error) {
	return newSampler(targets, interval, clk, log, hostRoots)
}

func newSampler(targets []Target, interval time.Duration, clk workload.Clock, log *slog.Logger, rt roots) (*Sampler, error) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if clk.Start.IsZero() {
		return nil, errors.New("telemetry: clock has no start time")
	}
	s := &Sampler{interval: interval, clk: clk, log: log}
	var errs []error
	seen := map[string]bool{}
	for _, t := range targets {
		if err := t.validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[t.Source] {
			errs = append(errs, fmt.Errorf("target %q: duplicate source", t.Source))
			continue
		}
		seen[t.Source] = true
		for _, m := range t.Missing {
			s.missing = append(s.missing, t.Source+": "+m)
		}
		cs, err := collectorsFor(t, rt, log)
		if err != nil {
			errs = append(errs, fmt.Errorf("target %q: %w", t.Source, err))
			continue
		}
		for _, c := range cs {
			s.series = append(s.series, &series{source: t.Source, c: c})
		}
	}
	if len(targets) == 0 {
		errs = append(errs, errors.New("no targets"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	return s, nil
}

// Missing lists what the targets said cannot be observed, as "source: what and why".
func (s *Sampler) Missing() []string { return slices.Clone(s.missing) }

// collectorsFor builds the collectors one target asks for.
func collectorsFor(t Target, rt roots, log *slog.Logger) ([]collector, error) {
	var cs []collector
	if t.Cgroup != nil {
		c, err := newCgroupCollector(*t.Cgroup, rt)
		if err != nil {
			return nil, err
		}
		sw, err := newGroupSwitches(*t.Cgroup, rt)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c, sw)
	}
	if len(t.Parts) > 0 {
		c, err := newPartsCollector(t.Parts, rt)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	if t.PID != 0 {
		c, err := newProcessCollector(t.PID, rt)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	if t.Host {
		c, err := newHostCollectors(rt)
		if err != nil {
			return nil, err
		}
		// This host's tasks only: a guest's mirror (systemCollector) has no /proc/<pid> to read.
		cs = append(cs, c...)
		cs = append(cs, newHostTasks(rt))
	}
	if t.Host || len(t.Interfaces) > 0 {
		c, err := newNetCollector(t.Interfaces, rt, log)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	if t.Guest != nil {
		cs = append(cs, t.Guest.groupCollector())
	}
	if t.GuestSystem != nil {
		c, err := t.GuestSystem.systemCollector()
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	if t.Stats != nil {
		cs = append(cs, &statsCollector{s: t.Stats})
	}
	if t.DataDir != "" {
		c, err := newDiskCollector(t.DataDir, rt)
		switch {
		case errors.Is(err, blockdev.ErrNoBlockDevice):
			log.Info("telemetry: no block device under data directory; disk metrics absent",
				"source", t.Source, "dir", t.DataDir, "reason", err)
		case err != nil:
			return nil, err
		default:
			log.Debug("telemetry: data directory device", "source", t.Source, "dir", t.DataDir, "device", c.describe())
			cs = append(cs, c)
		}
	}
	return cs, nil
}

// Start takes the baseline reading and starts sampling in the background until Stop or until
// ctx ends. It fails if called twice.
func (s *Sampler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("telemetry: sampler already started")
	}
	s.started = true
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	s.mu.Unlock()

	if err := recovery.Call("telemetry sampler", func() error { s.tick(); return nil }); err != nil {
		s.cancel()
		close(s.done)
		return err
	}
	go s.loop(ctx)
	return nil
}

// loop samples until ctx ends. A panic in a collector ends sampling; Stop returns it.
func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	defer recovery.Recover("telemetry sampler", &s.panicked)
	timer := time.NewTimer(s.untilNextTick())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			s.tick()
			timer.Reset(s.untilNextTick())
		}
	}
}

// untilNextTick is the wait until the next multiple of the interval after Clock.Start. A late
// tick does not cause a burst of catch-up ticks: missed multiples are skipped.
func (s *Sampler) untilNextTick() time.Duration {
	now := s.clk.Since(time.Now())
	next := (now/s.interval + 1) * s.interval
	return next - now
}

// tick reads every collector once and derives samples from the previous reading.
func (s *Sampler) tick() {
	for _, se := range s.series {
		r := reading{}
		err := se.c.collect(r)
		t := s.clk.Since(time.Now())
		if errors.Is(err, errNoNewRead) {
			continue // nothing new this tick: the next rate spans the longer gap
		}
		if err != nil {
			se.errs++
			if se.first == nil {
				se.first = err
				s.log.Warn("telemetry: read failed; its values are absent", "source", se.source,
					"collector", se.c.name(), "err", err)
			}
			// Keep the previous reading: the next good read gives a rate over the longer gap.
			continue
		}
		if st, ok := se.c.(stamped); ok {
			t = s.clk.Since(st.stampedAt()) // the values are of the source's moment
		}
		out := derive(se.source, se.prev, se.prevT, r, t)
		se.prev, se.prevT = r, t
		s.mu.Lock()
		s.samples = append(s.samples, out...)
		s.mu.Unlock()
	}
}

// Stop ends sampling, takes a last reading so the values cover the time up to Stop, and returns
// every sample ordered by time, source, metric and label. The last interval (from the last tick
// to Stop) may be short, and its rates swing more (CFS enforces a quota per 100 ms period); use
// time-weighted means, or the per-interval counts, which are exact. The error, if any, names the
// collectors whose reads failed; it never discards samples. Stop is idempotent.
func (s *Sampler) Stop() ([]Sample, error) {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		started := s.started
		s.mu.Unlock()
		if !started {
			return
		}
		s.cancel()
		<-s.done
		var errs []error
		if s.panicked != nil {
			errs = append(errs, s.panicked)
		} else if err := recovery.Call("telemetry sampler", func() error { s.tick(); return nil }); err != nil {
			errs = append(errs, err)
		}
		for _, se := range s.series {
			if c, ok := se.c.(io.Closer); ok {
				c.Close() // the files a collector keeps open between readings
			}
			if se.first != nil {
				errs = append(errs, fmt.Errorf("%s %s: %d failed reads, first: %w", se.source, se.c.name(), se.errs, se.first))
			}
		}
		s.mu.Lock()
		s.result = s.samples
		s.samples = nil
		s.mu.Unlock()
		sortSamples(s.result)
		if len(errs) > 0 {
			s.err = fmt.Errorf("telemetry: %w", errors.Join(errs...))
		}
	})
	return s.result, s.err
}

func sortSamples(ss []Sample) {
	slices.SortStableFunc(ss, func(a, b Sample) int {
		return cmp.Or(cmp.Compare(a.T, b.T), cmp.Compare(a.Source, b.Source),
			cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.Label, b.Label))
	})
}
