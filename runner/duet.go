package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
)

// AgentCommand starts `boxbench agent` on this host, for order: duet's pinned clients. The
// zero value is this executable's own agent command.
type AgentCommand struct {
	Argv []string
	Env  []string
}

func (a AgentCommand) argv() ([]string, error) {
	if len(a.Argv) > 0 {
		return a.Argv, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding boxbench's own binary for the duet's clients: %w", err)
	}
	return []string{self, "agent"}, nil
}

// slot is where one run goes: its sequence number (its work directory and cgroup names) and,
// in a duet, its side.
type slot struct {
	seq  int
	duet *duetSide
}

// duetSide is one run's half of a duet.
type duetSide struct {
	name    string // "A" or "B"
	side    placement.Side
	token   string // shared by both runs of the duet
	round   int
	partner string // the other run's id
	gate    *gate
}

func (d *duetSide) facts(rec *results.RunRecord) {
	rec.Facts[plan.FactDuetPair] = d.token
	rec.Duet = results.Duet{Pair: d.token, Round: d.round}
	rec.Facts[plan.FactDuetPartner] = d.partner
	rec.Facts[plan.FactDuetSide] = d.name + ": " + d.side.String()
	rec.Facts[plan.FactDuetLayout] = d.side.Layout
}

// wait blocks until both sides reached phase, or fails when the partner failed or ctx ended.
// Nil-safe: outside a duet it returns at once.
func (d *duetSide) wait(ctx context.Context, phase string) error {
	if d == nil {
		return nil
	}
	return d.gate.wait(ctx, phase)
}

// abandon releases the partner from every gate with the reason this side failed. Nil-safe.
func (d *duetSide) abandon(reason string) {
	if d != nil {
		d.gate.abandon(reason)
	}
}

// site is the side's client: boxbench's agent on this host, pinned to the side's client cpus.
func (d *duetSide) site(a AgentCommand, ep driver.Endpoint) *pinnedSite {
	return &pinnedSite{agent: a, cpus: d.side.Client, ep: ep}
}

// gate is a two-party barrier with named phases that a failing party opens for good.
type gate struct {
	mu      sync.Mutex
	arrived map[string]int
	open    map[string]chan struct{}
	failed  string
	broken  chan struct{}
}

func newGate() *gate {
	return &gate{arrived: map[string]int{}, open: map[string]chan struct{}{}, broken: make(chan struct{})}
}

func (g *gate) wait(ctx context.Context, phase string) error {
	g.mu.Lock()
	ch := g.open[phase]
	if ch == nil {
		ch = make(chan struct{})
		g.open[phase] = ch
	}
	g.arrived[phase]++
	if g.arrived[phase] == 2 {
		close(ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-g.broken:
		g.mu.Lock()
		defer g.mu.Unlock()
		return fmt.Errorf("the other run of the duet failed before %s: %s", phase, g.failed)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) abandon(reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failed == "" {
		g.failed = reason
		close(g.broken)
	}
}

// pinnedSite runs the agent as a child of boxbench under taskset, so that each side's client
// threads stay on the side's client cpus (a goroutine of boxbench's own could not be kept
// there).
type pinnedSite struct {
	agent AgentCommand
	cpus  []int
	ep    driver.Endpoint
}

func (s *pinnedSite) ClientPlace() (string, driver.Endpoint) {
	return "boxbench agent on this host, cpus " + placement.FormatList(s.cpus), s.ep
}

func (s *pinnedSite) ClientCPUs() string { return placement.FormatList(s.cpus) }

func (s *pinnedSite) RunAgent(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	argv, err := s.agent.argv()
	if err != nil {
		return err
	}
	out, err := command.RunWith(ctx, command.Options{Stdin: stdin, Env: s.agent.Env},
		append([]string{"taskset", "--cpu-list", placement.FormatList(s.cpus)}, argv...)...)
	if _, werr := stdout.Write(out); err == nil {
		err = werr
	}
	return err
}

// runDuets runs the pairs of order: duet, each pair's two runs at the same time on the two
// sides of the host, and stores both. A pair of which one run is already stored is run again
// whole (a duet is only a duet when both ran together), storing the missing run: its token
// differs from the stored partner's, so the analysis does not pair them.
func (r *Runner) runDuets(ctx context.Context, pairs []plan.Pair, done map[string]bool) error {
	sides, err := DuetSides(r.cfg.Spec)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		runs := p.Runs()
		if done[runs[0].ID()] && done[runs[1].ID()] {
			continue
		}
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		recs := r.executePair(ctx, p.Round, runs, sides)
		if ctx.Err() != nil {
			r.cfg.Log.Warn("duet interrupted; not stored", "runs", runs[0].ID()+" + "+runs[1].ID())
			return ErrInterrupted
		}
		for i, rec := range recs {
			if done[runs[i].ID()] {
				continue
			}
			if err := r.store1(ctx, runs[i], rec, done); err != nil {
				return err
			}
		}
	}
	return nil
}

// DuetSides splits this host's cpus for the duets of e in its layout (placement.duet, else
// chosen by the cpu count; the spec checked that it can).
func DuetSides(e *spec.Experiment) ([2]placement.Side, error) {
	p := e.Placement
	sets, problems := placement.Check(p.Client, p.Server, p.Neighbours, placement.HostCPUs())
	if len(problems) > 0 {
		return [2]placement.Side{}, fmt.Errorf("%s: %s", problems[0].Field, problems[0].Message)
	}
	a, b, err := placement.Duet(sets, placement.HostCPUs(), p.Duet)
	return [2]placement.Side{a, b}, err
}

// executePair runs the two runs of a duet concurrently and returns their records by side.
func (r *Runner) executePair(ctx context.Context, round int, runs [2]plan.Run, sides [2]placement.Side) [2]*results.RunRecord {
	var b [6]byte
	_, _ = rand.Read(b[:])
	token := fmt.Sprintf("r%d-%s", round, hex.EncodeToString(b[:])) // readable: the round shows
	g := newGate()
	var recs [2]*results.RunRecord
	var wg sync.WaitGroup
	for i := range runs {
		s := slot{seq: r.seq + 1 + i, duet: &duetSide{name: string(rune('A' + i)), side: sides[i], token: token, round: round,
			partner: runs[1-i].ID(), gate: g}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i] = r.execute(ctx, runs[i], r.workloads[runs[i].Cell.ID], s)
		}()
	}
	wg.Wait()
	return recs
}

// syncProgress serialises a Progress for the two runs of a duet.
type syncProgress struct {
	mu sync.Mutex
	p  Progress
}

func (s *syncProgress) Begin(total, done int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Begin(total, done)
}
func (s *syncProgress) Add(n int) { s.mu.Lock(); defer s.mu.Unlock(); s.p.Add(n) }
func (s *syncProgress) Phase(run plan.Run, phase string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Phase(run, phase)
}
func (s *syncProgress) End(run plan.Run, status, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.End(run, status, reason)
}
func (s *syncProgress) Finish() { s.mu.Lock(); defer s.mu.Unlock(); s.p.Finish() }

var errNoPairs = errors.New("order: duet pairs each cell with its baseline, and no cell of this plan has a baseline other than itself")
