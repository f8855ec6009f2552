// Package platformtest is the conformance suite every platform passes: provision → the endpoint
// answers → Exec works → resources read back equal the request → stop, capture and restore keep
// the data → Cleanup after a simulated crash removes everything of that experiment and nothing
// of another → teardown is idempotent and safe to call concurrently.
//
// The steps pass one box along where a fresh one would show nothing more (a box costs minutes
// on an emulated VM): the first choice's box from "provision" is the one "snapshot" writes,
// stops, captures and restores into a second box; that restored box is the live one beside
// which "crash-cleanup" removes a crashed experiment, and the one "teardown" tears down from
// several goroutines at once. With N choices the suite starts N+2 boxes; when each step
// provisioned its own it started N+5.
//
// A platform's own test calls Run with a real platform on a real host (no fakes); the suite
// needs root and the database's image or packages, like every integration test.
package platformtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
)

// Config says what to run the suite on.
type Config struct {
	Platform platform.Platform
	// DBMS runs in every box (Redis is the quickest to start).
	DBMS dbms.DBMS
	// Choices are provisioned once each in the "provision" step; the first one is used for the
	// other steps.
	Choices []platform.Choice
	// Resources are requested for every box and must read back unchanged.
	Resources   resource.Limits
	StorageOpts platform.StorageOptions
	// WorkRoot holds the boxes' work directories (a fresh directory of the test's).
	WorkRoot string
	// Leftovers lists what of experiment exp exists on the host: processes, cgroups,
	// containers, networks, mounts, directories. Empty means nothing is left.
	Leftovers func(ctx context.Context, exp string) []string
	// Experiment is the prefix of the experiment ids the suite uses (unique per test process).
	Experiment string
	// StepTimeout bounds each step (5 minutes when 0): an emulated VM boots in tens of seconds.
	StepTimeout time.Duration
	// Also, when set, runs in "provision" on the first choice's box after the suite's checks:
	// a platform's own checks that need a running box, without starting one more.
	Also func(ctx context.Context, t *testing.T, b platform.Box)
}

const marker = "platformtest.marker"

// Run runs the suite.
func Run(t *testing.T, cfg Config) {
	if len(cfg.Choices) == 0 || cfg.DBMS == nil || cfg.Leftovers == nil {
		t.Fatal("platformtest: Config needs Choices, DBMS and Leftovers")
	}
	s := &suite{cfg: cfg, top: t}
	// Runs last (cleanups run in reverse): what the handed-on boxes' experiment shares, when a
	// failed step left it to the boxes' own teardowns.
	t.Cleanup(func() {
		_, _ = cfg.Platform.Cleanup(context.Background(), cfg.WorkRoot, func(e string) bool { return e == s.exp("snapshot") })
	})
	t.Run("provision", s.provision)
	t.Run("snapshot", s.snapshot)
	t.Run("crash-cleanup", s.crashCleanup)
	t.Run("teardown", s.teardown)
}

// clean removes what the experiment's torn-down boxes share (its parent cgroup, its work
// directory) as the runner does at the end of an experiment, and requires nothing be left.
func (s *suite) clean(t *testing.T, exp string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.cfg.Platform.Cleanup(ctx, s.cfg.WorkRoot, func(e string) bool { return e == exp }); err != nil {
		t.Errorf("cleanup of %s: %v", exp, err)
	}
	if left := s.cfg.Leftovers(ctx, exp); len(left) > 0 {
		t.Errorf("left after teardown and cleanup of %s: %v", exp, left)
	}
}

type suite struct {
	cfg Config
	top *testing.T
	seq int
	// live is the box one step hands to the next (nil when the step that made it failed); it
	// belongs to experiment exp("snapshot") and is torn down by the step "teardown", or by
	// keep's cleanup when a step fails first.
	live platform.Box
}

// keep provisions the box a later step takes over: its teardown is registered on top (the
// suite's test), not on the step that made it.
func (s *suite) keep(ctx context.Context, t *testing.T, r platform.Request) platform.Box {
	t.Helper()
	b, err := s.cfg.Platform.Provision(ctx, r)
	if err != nil {
		t.Fatalf("provision %s/%s: %v", r.Storage, r.Network, err)
	}
	s.top.Cleanup(func() { _ = b.Teardown(context.Background()) })
	return b
}

// handed returns the box an earlier step left, or ends the step saying which step failed.
func (s *suite) handed(t *testing.T, from string) platform.Box {
	t.Helper()
	if s.live == nil {
		t.Fatalf("no box from the step %q (it failed above): this step needs it", from)
	}
	return s.live
}

func (s *suite) request(exp string, c platform.Choice) platform.Request {
	s.seq++
	run := fmt.Sprintf("pt%02d", s.seq)
	return platform.Request{Experiment: exp, Run: run, WorkDir: filepath.Join(s.cfg.WorkRoot, exp, run),
		DBMS: s.cfg.DBMS, Choice: c, Resources: s.cfg.Resources, StorageOpts: s.cfg.StorageOpts}
}

func (s *suite) exp(step string) string { return s.cfg.Experiment + "-" + step }

// up provisions a box and registers its teardown.
func (s *suite) up(ctx context.Context, t *testing.T, r platform.Request) platform.Box {
	t.Helper()
	b, err := s.cfg.Platform.Provision(ctx, r)
	if err != nil {
		t.Fatalf("provision %s/%s: %v", r.Storage, r.Network, err)
	}
	t.Cleanup(func() { _ = b.Teardown(context.Background()) })
	return b
}

func (s *suite) ctxFor(t *testing.T) context.Context {
	d := s.cfg.StepTimeout
	if d == 0 {
		d = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// provision: every choice answers, runs commands inside, and got exactly the resources asked.
// The first choice's box is kept for "snapshot" (in that step's experiment); it is made last,
// so that it does not idle beside the others' boots (an emulated guest's idle costs CPU).
func (s *suite) provision(t *testing.T) {
	ctx := s.ctxFor(t)
	exp := s.exp("provision")
	defer s.clean(t, exp)
	n := len(s.cfg.Choices)
	for k := range n {
		i := (k + 1) % n
		c := s.cfg.Choices[i]
		t.Run(c.Storage+"/"+c.Network, func(t *testing.T) {
			var b platform.Box
			if i == 0 {
				b = s.keep(ctx, t, s.request(s.exp("snapshot"), c))
				s.live = b
			} else {
				b = s.up(ctx, t, s.request(exp, c))
			}
			s.check(ctx, t, b)
			if i == 0 && s.cfg.Also != nil {
				s.cfg.Also(ctx, t, b)
			}
		})
	}
}

// check: the box answers, runs commands inside, got exactly the resources asked, and can be
// observed and described.
func (s *suite) check(ctx context.Context, t *testing.T, b platform.Box) {
	t.Helper()
	if err := s.cfg.DBMS.Ready(ctx, b.Endpoint(), s.cfg.DBMS.Client()); err != nil {
		t.Errorf("endpoint %s does not answer: %v", b.Endpoint(), err)
	}
	if out, err := b.Exec(ctx, []string{"id", "-u"}); err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Errorf("exec id -u: %q %v (want root)", out, err)
	}
	_, err := b.Exec(ctx, []string{"sh", "-c", "echo oops >&2; exit 3"})
	var ce *command.Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Output, "oops") {
		t.Errorf("a failing exec must return a *command.Error with its output: %v", err)
	}
	a := b.Applied()
	if d := resource.Differences(s.cfg.Resources, a.Limits); len(d) > 0 {
		t.Errorf("resources read back from %s differ: %s (how: %v)", a.From, strings.Join(d, "; "), a.How)
	}
	if a.From == "" {
		t.Error("Applied.From: where the limits were read back is not said")
	}
	o := b.Observe()
	if s.cfg.Platform.Info().HostCgroup && o.Cgroup == nil {
		t.Error("Info says HostCgroup but Observe gives no cgroup")
	}
	if o.Cgroup == nil && o.PID == 0 && len(o.Missing) == 0 {
		t.Error("Observe gives nothing to observe and does not say what is missing")
	}
	if o.DataDir != "" {
		if _, err := os.Stat(o.DataDir); err != nil {
			t.Errorf("Observe.DataDir %s: %v", o.DataDir, err)
		}
	}
	for _, k := range []string{"storage", "network", "command", "config_hash"} {
		if b.Facts()[k] == "" {
			t.Errorf("fact %s missing", k)
		}
	}
}

// snapshot: data written in provision's first box survives Stop, Capture and a restore into a
// new box, which is kept for the next steps.
func (s *suite) snapshot(t *testing.T) {
	ctx := s.ctxFor(t)
	exp := s.exp("snapshot")
	b := s.handed(t, "provision")
	s.live = nil
	want := fmt.Sprintf("written in %s at %d", exp, time.Now().UnixNano())
	if _, err := b.Exec(ctx, []string{"sh", "-c", `printf %s "$1" > "$2"`, "sh", want, b.DataDir() + "/" + marker}); err != nil {
		t.Fatalf("write the marker: %v", err)
	}
	if err := b.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	dst := filepath.Join(s.cfg.WorkRoot, exp+"-captured")
	t.Cleanup(func() { _ = os.RemoveAll(dst) })
	if err := b.Capture(ctx, dst); err != nil {
		t.Fatalf("capture: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dst, marker)); err != nil || string(got) != want {
		t.Fatalf("captured marker %q (%v), want %q", got, err, want)
	}
	if err := b.Teardown(ctx); err != nil {
		t.Fatalf("teardown: %v", err)
	}
	r := s.request(exp, s.cfg.Choices[0])
	r.Seed = &platform.Snapshot{Key: "platformtest", Dir: dst}
	b2 := s.keep(ctx, t, r)
	if err := s.cfg.DBMS.Ready(ctx, b2.Endpoint(), s.cfg.DBMS.Client()); err != nil {
		t.Fatalf("restored box does not answer: %v", err)
	}
	got, err := b2.Exec(ctx, []string{"cat", b2.DataDir() + "/" + marker})
	if err != nil || string(got) != want {
		t.Errorf("restored marker %q (%v), want %q", got, err, want)
	}
	s.live = b2
}

// crashCleanup: boxes of a "crashed" experiment (never torn down) are removed by Cleanup, and
// a live experiment's box beside it (the restored box of "snapshot") keeps running.
func (s *suite) crashCleanup(t *testing.T) {
	ctx := s.ctxFor(t)
	crashed := s.exp("crashed")
	live := s.handed(t, "snapshot")
	// Whatever happens below, nothing of the crashed experiment outlives the suite (a failed
	// provision leaves the experiment's parent cgroup).
	t.Cleanup(func() {
		_, _ = s.cfg.Platform.Cleanup(context.Background(), s.cfg.WorkRoot, func(e string) bool { return e == crashed })
	})
	r := s.request(crashed, s.cfg.Choices[0])
	if _, err := s.cfg.Platform.Provision(ctx, r); err != nil { // abandoned: no teardown, as after kill -9
		t.Fatal(err)
	}
	if left := s.cfg.Leftovers(ctx, crashed); len(left) == 0 {
		t.Fatal("Leftovers sees nothing of a running box: the check cannot fail")
	}
	gone, err := s.cfg.Platform.Cleanup(ctx, s.cfg.WorkRoot, func(e string) bool { return e == crashed })
	if err != nil {
		t.Errorf("cleanup: %v", err)
	}
	if len(gone) == 0 {
		t.Error("cleanup reports nothing removed")
	}
	if left := s.cfg.Leftovers(ctx, crashed); len(left) > 0 {
		t.Errorf("left after cleanup: %v", left)
	}
	if err := s.cfg.DBMS.Ready(ctx, live.Endpoint(), s.cfg.DBMS.Client()); err != nil {
		t.Errorf("cleanup of %s hurt the live experiment %s: %v", crashed, s.exp("snapshot"), err)
	}
}

// teardown: concurrent and repeated teardowns of a running box (the restored one) all succeed,
// and with the experiment's cleanup leave nothing.
func (s *suite) teardown(t *testing.T) {
	ctx := s.ctxFor(t)
	b := s.handed(t, "snapshot")
	s.live = nil
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = b.Teardown(ctx) }()
	}
	wg.Wait()
	if err := errors.Join(append(errs, b.Teardown(ctx))...); err != nil {
		t.Errorf("teardown: %v", err)
	}
	s.clean(t, s.exp("snapshot"))
}
