// Package fio runs fio (Debian's fio package) as a boxbench workload inside the box, on the
// very storage the database's data directory is on: the container's writable layer, the bind
// mount, the volume, the block device, or the host directory natively. It measures what the
// storage path does, beside what the database sees.
//
// What is measured and how it maps to a Result:
//
//   - fio runs through Target.Box.Exec in <DataDir>/fio, created before and removed after,
//     as threads (--thread) so that killing fio stops every job, with --output-format=json+.
//   - Warm-up is fio's ramp_time: fio runs the job and discards its statistics, so there is
//     nothing to store for it. The measured window is stored as one interval per operation
//     (fio's per-second logs give no sync-latency histograms and would have to be copied out
//     of the box); its end is when fio exited and its start that minus fio's job runtime.
//   - Ops "read", "write" (and "trim"): fio's completion latency (clat_ns; with the
//     synchronous psync engine, the time of the pread/pwrite call), its json+ bins re-recorded
//     in an HDR histogram, each bin's count at the bin's value (fio's bins are within 1/64 of
//     their value). Op "fsync": fio's "sync" section, the latency of each fsync or fdatasync
//     call (wal uses fdatasync). fio is a closed loop: both "latency" and "service" series are
//     stored, equal.
//   - Jobs (Threads > 1) are reported as one (--group_reporting): fio adds their bins, IOPS
//     and bandwidth. Reports with several jobs (a fio run by hand) are merged the same way.
//   - Metrics hold fio's own numbers where fio prints them (IOPS, bandwidth, its percentiles
//     of clat and sync latency, exact maxima), for comparison with published fio results; the
//     Ops' percentiles come from the HDR histogram, whose rank convention can differ from
//     fio's by one sample (visible only in sparse tails).
//   - ClientCPU is fio's own user+system time (its usr_cpu and sys_cpu over the job runtime).
package fio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/workload"
)

// Errors Run returns (wrapped) for a box that cannot run the job.
var (
	ErrNotInstalled      = errors.New("fio is not installed in the box (apt-get install fio; boxbench's images include it)")
	ErrDirectUnsupported = errors.New("the filesystem under the data directory does not support direct I/O (O_DIRECT; e.g. tmpfs before Linux 6.6, ramfs): run with direct: false")
)

// Subdir is the directory fio works in, under the box's data directory.
const Subdir = "fio"

// grace is how long after ramp + runtime fio may take before it is killed: laying out its
// files (Size per job, written before the clock starts) and exiting. It stays under the
// runner's own grace (2 min), so a hung fio is reported by this package.
const grace = 90 * time.Second

// Workload is one configured fio job. It is safe for sequential use by one runner.
type Workload struct {
	cfg  Config
	name string
	opts map[string]string
	// laidOut: Layout has created the files, so Run uses them instead of starting afresh.
	laidOut bool
}

var _ workload.Workload = (*Workload)(nil)

// New validates cfg and returns the workload.
func New(cfg Config) (*Workload, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("fio config: %w", err)
	}
	name, opts, _ := cfg.job()
	return &Workload{cfg: cfg, name: name, opts: opts}, nil
}

// Config returns the workload's configuration.
func (w *Workload) Config() Config { return w.cfg }

// Name is "fio/<preset>", "fio/<preset>-custom" for a job map on a preset, "fio/custom".
func (w *Workload) Name() string { return "fio/" + w.name }

// Traits: fio runs inside the box (Target.Box), so never at a client site, and lays its files
// out ahead of the window (Layout).
func (w *Workload) Traits() workload.Traits { return workload.Traits{Layout: w.Layout} }

// LoadKey is empty: fio needs no data set.
func (w *Workload) LoadKey() string { return "" }

// Load does nothing: fio lays out its own files in Run.
func (w *Workload) Load(context.Context, workload.Target) error { return nil }

// Argv is the fio command line Run executes in the box, for a data directory dataDir.
func (w *Workload) Argv(dataDir string) []string {
	c := w.cfg
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
	direct := "0"
	if c.Direct {
		direct = "1"
	}
	argv := []string{"fio", "--name=" + w.name, "--directory=" + path.Join(dataDir, Subdir),
		"--output-format=json+", "--thread=1", "--group_reporting=1"}
	keys := make([]string, 0, len(w.opts))
	for k := range w.opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		argv = append(argv, "--"+k+"="+w.opts[k])
	}
	argv = append(argv, "--direct="+direct, "--size="+strconv.FormatInt(c.Size, 10),
		"--numjobs="+strconv.Itoa(c.Threads), "--time_based=1", "--runtime="+ms(c.Duration))
	if c.Warmup > 0 {
		argv = append(argv, "--ramp_time="+ms(c.Warmup))
	}
	return argv
}

// Run runs the job in the box's data directory and parses fio's json+ report. On failure it
// returns the error with whatever could be parsed.
// Layout creates the job's files ahead of Run (fio --create_only), so that a run that starts
// later does its own I/O pattern from its first second. A neighbour needs this: otherwise it
// spends the measured database's first seconds writing its files sequentially.
func (w *Workload) Layout(ctx context.Context, t workload.Target) error {
	if t.Box == nil {
		return errors.New("fio: the target has no box to run in")
	}
	dir := path.Join(t.DataDir, Subdir)
	if err := w.freshDir(ctx, t.Box, dir); err != nil {
		return err
	}
	if out, err := t.Box.Exec(ctx, append(w.Argv(t.DataDir), "--create_only=1")); err != nil {
		return fmt.Errorf("fio layout: %w", classify(err, out, dir))
	}
	w.laidOut = true
	return nil
}

func (w *Workload) freshDir(ctx context.Context, box workload.Executor, dir string) error {
	if _, err := box.Exec(ctx, []string{"rm", "-rf", dir}); err != nil {
		return boxError("remove "+dir, err)
	}
	if _, err := box.Exec(ctx, []string{"mkdir", "-p", dir}); err != nil {
		return boxError("create "+dir, err)
	}
	return nil
}

func (w *Workload) Run(ctx context.Context, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	if t.Box == nil {
		return nil, errors.New("fio: the target has no box to run in")
	}
	if t.DataDir == "" || !path.IsAbs(t.DataDir) {
		return nil, fmt.Errorf("fio: the target's data directory %q is not an absolute path", t.DataDir)
	}
	log := t.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := path.Join(t.DataDir, Subdir)
	if !w.laidOut {
		if err := w.freshDir(ctx, t.Box, dir); err != nil {
			return nil, err
		}
	}
	defer func() {
		// Removed even when ctx is cancelled: the files are Size × Threads in the box's storage.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := t.Box.Exec(cctx, []string{"rm", "-rf", dir}); err != nil {
			log.Warn("fio: could not remove its directory", "dir", dir, "err", err)
		}
	}()

	argv := w.Argv(t.DataDir)
	limit := w.cfg.Warmup + w.cfg.Duration + grace
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	log.Info("fio run", "argv", strings.Join(argv, " "))
	out, runErr := t.Box.Exec(rctx, argv)
	end := clk.Since(time.Now())
	if runErr != nil {
		runErr = classify(runErr, out, dir)
		if rctx.Err() != nil && ctx.Err() == nil {
			runErr = fmt.Errorf("fio did not finish within %s, killed: %w", limit, runErr)
		}
	}
	rep, perr := Parse(out)
	if perr != nil {
		if runErr != nil {
			return nil, fmt.Errorf("fio run: %w", runErr)
		}
		return nil, fmt.Errorf("fio run (%s): %w", strings.Join(argv, " "), perr)
	}
	res, rerr := w.result(rep, end)
	if runErr != nil {
		return res, fmt.Errorf("fio run: %w", runErr)
	}
	if rerr != nil {
		return res, fmt.Errorf("fio run (%s): %w", strings.Join(argv, " "), rerr)
	}
	return res, nil
}

// classify turns fio's known failures into the package's errors, keeping the original (with
// argv and output) wrapped.
func classify(err error, stdout []byte, dir string) error {
	text := string(stdout)
	var ce *command.Error
	exit := -1
	if errors.As(err, &ce) {
		text += "\n" + ce.Output
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		exit = ec.ExitCode()
	}
	switch {
	case strings.Contains(text, "does not support direct=1") || strings.Contains(text, "does not support O_DIRECT"):
		return fmt.Errorf("%w (%s): %w", ErrDirectUnsupported, dir, err)
	case exit == 127 || strings.Contains(text, "executable file not found") ||
		strings.Contains(text, "fio: not found") || strings.Contains(text, "fio: No such file"):
		return fmt.Errorf("%w: %w", ErrNotInstalled, err)
	}
	return err
}

func boxError(what string, err error) error {
	return fmt.Errorf("fio: %s in the box: %w", what, err)
}
