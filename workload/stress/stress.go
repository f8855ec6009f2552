// Package stress runs stress-ng inside a box as a noisy neighbour: CPU hogs and
// memory-bandwidth hogs. It measures only what stress-ng reports (bogo operations per second),
// which is enough to show how much work the neighbour got done beside the database.
package stress

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/workload"
)

// Config says what to hog.
type Config struct {
	CPU      int           // CPU hog workers (stress-ng --cpu)
	VM       int           // memory-bandwidth hog workers (stress-ng --vm)
	VMBytes  int64         // memory each vm worker touches (default 256 MiB)
	Duration time.Duration // how long to run
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.CPU < 0 || c.VM < 0 {
		errs = append(errs, fmt.Errorf("cpu %d / vm %d: worker counts cannot be negative", c.CPU, c.VM))
	}
	if c.CPU == 0 && c.VM == 0 {
		errs = append(errs, errors.New("cpu and vm are both 0: give cpu: N (CPU hog) or vm: N (memory-bandwidth hog)"))
	}
	if c.Duration < time.Second {
		errs = append(errs, fmt.Errorf("duration %s: stress-ng runs for whole seconds (valid: 1s or more)", c.Duration))
	}
	return errors.Join(errs...)
}

// Workload is one configured stress-ng run.
type Workload struct{ cfg Config }

// New validates cfg.
func New(cfg Config) (*Workload, error) {
	if cfg.VMBytes == 0 {
		cfg.VMBytes = 256 << 20
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Workload{cfg: cfg}, nil
}

// Traits: stress-ng runs inside the box and has nothing to lay out.
func (w *Workload) Traits() workload.Traits { return workload.Traits{} }

func (w *Workload) Name() string {
	return fmt.Sprintf("stress/cpu=%d,vm=%d", w.cfg.CPU, w.cfg.VM)
}

// LoadKey is empty: a hog needs no data.
func (w *Workload) LoadKey() string                             { return "" }
func (w *Workload) Load(context.Context, workload.Target) error { return nil }

// Argv is the command run inside the box.
func (w *Workload) Argv() []string {
	c := w.cfg
	argv := []string{"stress-ng", "--timeout", strconv.Itoa(int(c.Duration.Round(time.Second)/time.Second)) + "s",
		"--metrics-brief", "--yaml", "/dev/stdout"}
	if c.CPU > 0 {
		argv = append(argv, "--cpu", strconv.Itoa(c.CPU))
	}
	if c.VM > 0 {
		argv = append(argv, "--vm", strconv.Itoa(c.VM), "--vm-bytes", strconv.FormatInt(c.VMBytes, 10))
	}
	return argv
}

// Run runs stress-ng in the box for the configured duration.
func (w *Workload) Run(ctx context.Context, t workload.Target, clk workload.Clock) (*workload.Result, error) {
	if t.Box == nil {
		return nil, errors.New("stress runs inside a box, and this target has none")
	}
	start := time.Now()
	out, err := t.Box.Exec(ctx, w.Argv())
	if err != nil {
		if strings.Contains(err.Error(), "executable file not found") || strings.Contains(err.Error(), "stress-ng: not found") {
			return nil, fmt.Errorf("stress-ng is not installed in the box (apt-get install stress-ng; rebuild images with boxbench images build): %w", err)
		}
		return nil, err
	}
	ms, err := Parse(out)
	if err != nil {
		return nil, err
	}
	res := &workload.Result{Mode: workload.ModeClosed, Threads: w.cfg.CPU + w.cfg.VM, Measured: time.Since(start),
		Metrics: map[string]float64{}}
	for _, m := range ms {
		res.Ops = append(res.Ops, workload.OpSummary{Op: m.Stressor, Series: "latency", Count: m.BogoOps, Throughput: m.PerSecond})
		res.Metrics[m.Stressor+"_bogo_ops_per_second"] = m.PerSecond
		res.ClientCPU += time.Duration((m.User + m.System) * float64(time.Second))
	}
	res.ClientCPUWall = res.Measured
	return res, nil
}

// Metric is one stressor's outcome.
type Metric struct {
	Stressor  string  `yaml:"stressor"`
	BogoOps   int64   `yaml:"bogo-ops"`
	PerSecond float64 `yaml:"bogo-ops-per-second-real-time"`
	User      float64 `yaml:"user-time"`
	System    float64 `yaml:"system-time"`
}

// Parse reads stress-ng's --yaml output.
func Parse(b []byte) ([]Metric, error) {
	var doc struct {
		Metrics []Metric `yaml:"metrics"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("parse stress-ng yaml: %w", err)
	}
	if len(doc.Metrics) == 0 {
		return nil, errors.New("stress-ng reported no metrics")
	}
	return doc.Metrics, nil
}
