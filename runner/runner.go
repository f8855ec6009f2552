// Package runner executes a plan: for each run, in order, provision the box, restore the
// loaded data, warm up, measure with telemetry on the same clock, tear down on every exit path,
// and store the run atomically. It resumes an interrupted experiment and adds adaptive
// repetitions where a cell's interval is still too wide.
package runner

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/hostenv"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/stats"
	"github.com/boxbench/boxbench/version"
	"github.com/boxbench/boxbench/workload"
)

// ErrInterrupted is returned when the context was cancelled (Ctrl-C, SIGTERM). The run in
// progress was torn down and not stored; --resume redoes it.
var ErrInterrupted = errors.New("interrupted")

// WorkloadFactory builds the workload of one cell; it validates the configuration so that bad
// input is reported for every cell before anything starts.
type WorkloadFactory func(e *spec.Experiment, c *plan.Cell) (workload.Workload, error)

// NeighbourFactory builds a neighbour's workload to run for the whole measured window.
type NeighbourFactory func(n *spec.Neighbour, window time.Duration) (workload.Workload, error)

// DBMSFactory returns the database of a cell by name.
type DBMSFactory func(name string) (dbms.DBMS, error)

// Config is everything a Runner needs. The factories come from package builtin.
type Config struct {
	Spec     *spec.Experiment
	SpecText []byte
	OutDir   string
	// Out, when not nil, is OutDir already claimed (results.Claim) by the caller, who holds
	// it past Run (the CLI writes the report there); otherwise Run claims OutDir itself and
	// releases it when it returns.
	Out        *results.Out
	WorkRoot   string
	Resume     bool
	Platforms  map[string]platform.Platform
	Workloads  WorkloadFactory
	Neighbours NeighbourFactory
	DBMS       DBMSFactory
	Check      plan.Checker
	Log        *slog.Logger
	Progress   Progress
	// Agent starts boxbench's agent on this host (order: duet's pinned clients); the zero
	// value is this executable's `agent` command.
	Agent AgentCommand
	// UntilRound, when above 0, runs only the planned rounds 1..UntilRound (no adaptive
	// rounds before the planned ones are all stored) and stops; Resume continues. Several
	// experiments can so take turns round by round, each seeing the same load as the others
	// (scripts/precision.sh), instead of one after the other.
	UntilRound int
}

// Summary is what an experiment did.
type Summary struct {
	ExperimentID string
	OK, Failed   int
	Skipped      int // cells
	ResultsFile  string
}

// Runner runs one experiment.
type Runner struct {
	cfg       Config
	id        string
	store     *results.Store
	plan      *plan.Plan
	workloads map[string]workload.Workload
	env       map[string]string
	// clientCPUs are the cpus placement.client pinned boxbench's own client to ("" unpinned):
	// every run's RunRecord.ClientCPUs unless its client runs elsewhere.
	clientCPUs string
	seeds      *seedCache
	seq        int
}

// Run executes (or resumes) the experiment.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	r := &Runner{cfg: cfg, workloads: map[string]workload.Workload{}}
	if r.cfg.Progress == nil {
		r.cfg.Progress = nopProgress{}
	}
	out := cfg.Out
	if out == nil {
		// Before anything is written: a system directory, another program's directory or one
		// another boxbench holds is refused here with nothing created.
		o, err := results.Claim(cfg.OutDir, cfg.Spec.Name, cfg.WorkRoot)
		if err != nil {
			return Summary{}, err
		}
		defer o.Close()
		out = o
	}
	store, err := results.OpenIn(out.Dir)
	if err != nil {
		return Summary{}, results.DiskFull(err, filepath.Join(cfg.OutDir, results.FileName))
	}
	defer store.Close()
	r.store = store
	seed, err := r.identify()
	if err != nil {
		return Summary{}, err
	}
	if err := out.Note(r.id); err != nil {
		return Summary{}, err
	}
	if err := CheckWorkRoot(cfg.WorkRoot); err != nil {
		return Summary{}, err
	}
	unlock, err := lockExperiment(cfg.WorkRoot, r.id)
	if err != nil {
		return Summary{}, err
	}
	defer unlock()
	r.cleanupLeftovers(ctx, slog.LevelInfo)
	// At the end too: the experiment's own cgroup parent and work directory.
	defer r.cleanupLeftovers(context.WithoutCancel(ctx), slog.LevelDebug)

	p, problems := plan.Expand(ctx, cfg.Spec, seed, cfg.Check)
	if len(problems) > 0 {
		return Summary{}, &spec.Error{File: cfg.Spec.Name, Problems: problems}
	}
	if err := p.Unmet(); err != nil {
		// A cell that waits for an image or a package would fail at its first provision:
		// refused before any box, with the commands (the cli says so before --out is claimed).
		return Summary{}, err
	}
	r.plan = p
	if c := cfg.Spec.Placement.Client; c != "" {
		got, err := placement.Pin(c)
		if err != nil {
			return Summary{}, err
		}
		r.clientCPUs = got
	}
	// The boxes' placement is their cpuset limit (requested and read back with every run);
	// recorded here too so that the environment says where every process ran.
	if s := cfg.Spec.Placement.Server; s != "" {
		r.env["server_cpus"] = s
	}
	if s := cfg.Spec.Placement.Neighbours; s != "" {
		r.env["neighbour_cpus"] = s
	}
	if err := r.buildWorkloads(); err != nil {
		return Summary{}, err
	}
	if err := r.storePlan(); err != nil {
		return Summary{}, results.DiskFull(err, store.Path())
	}
	r.seeds = newSeedCache(filepath.Join(cfg.WorkRoot, "seeds"), r.id, cfg.Platforms, cfg.Spec.DefaultPlatform(), cfg.Log)

	done, err := store.Done()
	if err != nil {
		return Summary{}, err
	}
	r.seq = len(done)
	if cfg.Spec.Order == "duet" {
		err = r.duets(ctx, done)
	} else {
		err = r.rounds(ctx, done)
	}
	r.cfg.Progress.Finish()
	sum := Summary{ExperimentID: r.id, Skipped: len(p.Skipped), ResultsFile: store.Path()}
	rows, qerr := store.Runs()
	for _, row := range rows {
		if row.Status == "ok" {
			sum.OK++
		} else {
			sum.Failed++
		}
	}
	return sum, errors.Join(err, qerr)
}

// rounds runs the plan's runs in their order, then the adaptive repetitions.
func (r *Runner) rounds(ctx context.Context, done map[string]bool) error {
	p := r.plan
	var todo []plan.Run
	planned := 0 // within UntilRound
	for _, run := range p.Runs {
		if !r.inRounds(run.Rep) {
			continue
		}
		planned++
		if !done[run.ID()] {
			todo = append(todo, run)
		}
	}
	if r.cfg.Resume {
		_ = r.store.Event("resume", fmt.Sprintf("%d of %d planned runs already stored; %d to go", planned-len(todo), planned, len(todo)))
	}
	r.cfg.Progress.Begin(planned, planned-len(todo))
	if err := r.runAll(ctx, todo, done); err != nil {
		return err
	}
	if !r.inRounds(r.cfg.Spec.Repetitions.Min + 1) {
		return nil // stopped at UntilRound: the adaptive rounds come after the planned ones
	}
	return r.adaptive(ctx, done)
}

// inRounds says whether round (1-based) is within Config.UntilRound.
func (r *Runner) inRounds(round int) bool {
	return r.cfg.UntilRound <= 0 || round <= r.cfg.UntilRound
}

// duets runs order: duet's pairs, the two runs of each at the same time.
func (r *Runner) duets(ctx context.Context, done map[string]bool) error {
	last := r.cfg.Spec.Repetitions.Min
	if !r.inRounds(last) {
		last = r.cfg.UntilRound
	}
	pairs := plan.DuetPairs(r.plan, 1, last)
	if len(pairs) == 0 {
		return errNoPairs
	}
	stored := 0
	for _, p := range pairs {
		for _, run := range p.Runs() {
			if done[run.ID()] {
				stored++
			}
		}
	}
	if r.cfg.Resume {
		_ = r.store.Event("resume", fmt.Sprintf("%d of %d planned runs already stored", stored, 2*len(pairs)))
	}
	r.cfg.Progress = &syncProgress{p: r.cfg.Progress}
	r.cfg.Progress.Begin(2*len(pairs), stored)
	return r.runDuets(ctx, pairs, done)
}

func (r *Runner) runAll(ctx context.Context, runs []plan.Run, done map[string]bool) error {
	for _, run := range runs {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		wl := r.workloads[run.Cell.ID]
		rec := r.execute(ctx, run, wl, slot{seq: r.seq + 1})
		if ctx.Err() != nil {
			// The run was cut short: not a result. Resume redoes it.
			r.cfg.Log.Warn("run interrupted; not stored", "run", run.ID())
			return ErrInterrupted
		}
		if err := r.store1(ctx, run, rec, done); err != nil {
			return err
		}
	}
	return nil
}

// store1 stores a finished run and counts it.
func (r *Runner) store1(ctx context.Context, run plan.Run, rec *results.RunRecord, done map[string]bool) error {
	r.seq++
	rec.Seq = r.seq
	if err := r.store.PutRun(context.WithoutCancel(ctx), rec); err != nil {
		if results.Full(err) {
			// Nothing more can be stored: stop here, with the box torn down and every
			// run stored before this one kept (a committed run survives; resume redoes
			// this one).
			return fmt.Errorf("store run %s: %w; the experiment stops here, keeping the %d run(s) stored before it: free space there and continue with --resume",
				rec.ID, results.DiskFull(err, r.store.Path()), r.seq-1)
		}
		return fmt.Errorf("store run %s: %w", rec.ID, err)
	}
	done[run.ID()] = true
	r.cfg.Progress.End(run, rec.Status, rec.Reason)
	return nil
}

// adaptive adds rounds of runs for the cells whose throughput interval is still wider than
// the target, or whose comparison with its baseline could not yet detect the target effect, up
// to the maximum, recording each decision. The detectable effect is the one the report's verdict
// is given with: paired by round under pairing: rounds, else unpaired.
func (r *Runner) adaptive(ctx context.Context, done map[string]bool) error {
	reps := r.cfg.Spec.Repetitions
	if !reps.Adaptive() {
		return nil
	}
	rule := stats.AdaptiveRule{Min: reps.Min, Max: reps.Max, TargetCIHalfWidth: float64(reps.TargetCIHalfWidth),
		TargetEffect: float64(reps.TargetEffect)}
	for rep := reps.Min + 1; rep <= reps.Max; rep++ {
		byRound, err := r.throughputs()
		if err != nil {
			return err
		}
		samples := map[string][]float64{}
		for id, m := range byRound {
			for _, round := range slices.Sorted(maps.Keys(m)) {
				samples[id] = append(samples[id], m[round])
			}
		}
		var need []*plan.Cell
		added := map[*plan.Cell]bool{}
		add := func(c *plan.Cell, why string) {
			if !added[c] {
				added[c] = true
				need = append(need, c)
				_ = r.store.Event("adaptive", fmt.Sprintf("%s: run %d added: %s", c.ID, rep, why))
			}
		}
		for _, c := range r.plan.Cells {
			more, why := stats.NeedMore(samples[c.ID], rule)
			if b := r.plan.Baseline[c]; b != nil && b != c {
				if r.cfg.Spec.Pairing == "rounds" {
					more, why = stats.NeedMorePaired(samples[c.ID], stats.PairByRound(byRound[b.ID], byRound[c.ID]), rule)
				} else {
					more, why = stats.NeedMoreVs(samples[b.ID], samples[c.ID], rule)
				}
				if more && len(samples[b.ID]) < rule.Max {
					add(b, "its comparison with "+c.ID+" needs it: "+why) // the effect shrinks only with both
				}
			}
			if more {
				add(c, why)
			}
		}
		if len(need) == 0 {
			_ = r.store.Event("adaptive", fmt.Sprintf("every cell reached its target after %d runs", rep-1))
			return nil
		}
		var todo []plan.Run
		for _, run := range plan.Order(need, rep, rep, r.cfg.Spec.Order, r.plan.Seed) {
			if !done[run.ID()] {
				todo = append(todo, run)
			}
		}
		r.cfg.Progress.Add(len(todo))
		if err := r.runAll(ctx, todo, done); err != nil {
			return err
		}
	}
	return nil
}

// throughputs is each cell's throughput of its ok runs, by repetition (round).
func (r *Runner) throughputs() (map[string]map[int]float64, error) {
	rows, err := r.store.Runs()
	if err != nil {
		return nil, err
	}
	out := map[string]map[int]float64{}
	for _, row := range rows {
		if row.Status == "ok" && row.Throughput != nil {
			if out[row.CellID] == nil {
				out[row.CellID] = map[int]float64{}
			}
			out[row.CellID][row.Rep] = *row.Throughput
		}
	}
	return out, nil
}

// identify creates the experiment's identity in a new results file, or checks that a resumed
// one holds the same spec. It returns the order seed.
func (r *Runner) identify() (uint64, error) {
	s := r.store
	id, err := s.Meta("experiment_id")
	if err != nil {
		return 0, err
	}
	specHash := hash(r.cfg.SpecText)
	if id != "" {
		if !r.cfg.Resume {
			return 0, fmt.Errorf("%s already holds experiment %s; continue it with --resume, or choose another --out", r.cfg.OutDir, id)
		}
		if old, _ := s.Meta("spec_hash"); old != specHash {
			return 0, fmt.Errorf("the spec changed since experiment %s started in %s (spec hash %s, now %s); resume needs the same spec — use another --out for the new one", id, r.cfg.OutDir, old, specHash)
		}
		r.id = id
		seedText, _ := s.Meta("seed")
		r.env = map[string]string{}
		envText, _ := s.Meta("env")
		_ = json.Unmarshal([]byte(envText), &r.env)
		return strconv.ParseUint(seedText, 10, 64)
	}
	if r.cfg.Resume {
		r.cfg.Log.Info("nothing to resume: starting a new experiment", "out", r.cfg.OutDir)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	r.id = r.cfg.Spec.Name + "-" + hex.EncodeToString(b[:])
	seed := uint64(time.Now().UnixNano())
	if r.cfg.Spec.Seed != nil {
		seed = uint64(*r.cfg.Spec.Seed)
	}
	r.env = hostenv.Capture()
	maps.Copy(r.env, hostenv.WakeupFacts())
	envJSON, _ := json.Marshal(r.env)
	return seed, s.SetMeta(map[string]string{
		"experiment_id": r.id, "name": r.cfg.Spec.Name, "spec": string(r.cfg.SpecText), "spec_hash": specHash,
		"seed": strconv.FormatUint(seed, 10), "created_at": time.Now().UTC().Format(time.RFC3339),
		"boxbench_version": version.Version() + " " + version.Commit(), "env": string(envJSON),
		"schema_version": results.SchemaVersion, "order": r.cfg.Spec.Order,
	})
}

func (r *Runner) buildWorkloads() error {
	var errs []error
	for _, c := range r.plan.Cells {
		wl, err := r.cfg.Workloads(r.cfg.Spec, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("cell %s: %w", c.ID, err))
			continue
		}
		r.workloads[c.ID] = wl
	}
	return errors.Join(errs...)
}

func (r *Runner) storePlan() error {
	var recs []results.CellRecord
	for _, c := range r.plan.Cells {
		rec := results.CellRecord{ID: c.ID, Params: c.Params}
		if b := r.plan.Baseline[c]; b != nil {
			rec.BaselineID = b.ID
		}
		recs = append(recs, rec)
	}
	for _, s := range r.plan.Skipped {
		recs = append(recs, results.CellRecord{ID: s.Cell.ID, Params: s.Cell.Params, SkippedReason: s.Reason})
	}
	return r.store.PutCells(recs)
}

// cleanupLeftovers removes what a crashed earlier attempt of this experiment left behind.
func (r *Runner) cleanupLeftovers(ctx context.Context, level slog.Level) {
	gone, err := platform.CleanupAll(ctx, r.cfg.Platforms, r.cfg.WorkRoot, func(exp string) bool { return exp == r.id })
	for _, g := range gone {
		r.cfg.Log.Log(ctx, level, "removed leftover", "platform", g.Platform, "what", g.What)
	}
	if err != nil {
		r.cfg.Log.Warn("cleanup of leftovers incomplete", "err", err)
	}
	_ = os.RemoveAll(filepath.Join(r.cfg.WorkRoot, r.id))
}

func hash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])[:16]
}
