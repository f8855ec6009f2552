package fio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms/postgresql"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/testkit/testdb"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/workload"
)

func TestValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	for _, p := range PresetNames() {
		c := DefaultConfig()
		c.Job = p
		if _, err := New(c); err != nil {
			t.Errorf("preset %s: %v", p, err)
		}
	}
	err := Config{Job: "fsync-extreme", Duration: 0, Warmup: -time.Second, Threads: 0, Size: 0}.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"Job:", "fsync-high", "Duration:", "Warmup:", "Threads:", "Size:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
	c := DefaultConfig()
	c.Job = map[string]any{"rw": "randwrite", "runtime": 5, "direct": true, "filename": "/dev/vda", "exec_prerun": "rm -rf /", "Bad-Name": 1}
	err = c.Validate()
	for _, want := range []string{"Job.runtime: is set by Duration", "Job.direct: is set by Direct", "Job.filename", "Job.exec_prerun", "Job.Bad-Name"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
	c.Job = map[string]any{"bs": "4k"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "no rw") {
		t.Errorf("a map without rw: %v", err)
	}
	c.Job = map[string]any{"preset": "walrus", "bs": "16k"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "Job.preset") {
		t.Errorf("a map with an unknown preset: %v", err)
	}
	c.Job = 42
	if err := c.Validate(); err == nil {
		t.Error("a number as a job was accepted")
	}
}

func TestJobMap(t *testing.T) {
	c := DefaultConfig()
	c.Job = map[string]any{"preset": "wal", "bs": "16k", "iodepth": 1, "fsync_on_close": true, "rate_iops": 500.0, "rwmixread": 0.5}
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != "fio/wal-custom" || w.LoadKey() != "" {
		t.Errorf("Name %q LoadKey %q", w.Name(), w.LoadKey())
	}
	got := strings.Join(w.Argv("/data"), " ")
	for _, want := range []string{"--bs=16k", "--fdatasync=1", "--rw=write", "--ioengine=psync", "--iodepth=1",
		"--fsync_on_close=1", "--rate_iops=500", "--rwmixread=0.5", "--directory=/data/fio"} {
		if !strings.Contains(got, " "+want) {
			t.Errorf("argv lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, "--bs=8k") {
		t.Errorf("the preset's bs was not overridden: %s", got)
	}
	c.Job = map[string]any{"rw": "randrw", "bs": "4k"}
	w, _ = New(c)
	if w.Name() != "fio/custom" {
		t.Errorf("Name %q", w.Name())
	}
}

// recorder is a fake box at the process boundary: it records argv and answers fio with a
// captured output.
type recorder struct {
	calls  [][]string
	stdout []byte
	err    error
}

func (r *recorder) Exec(_ context.Context, argv []string) ([]byte, error) {
	r.calls = append(r.calls, argv)
	if argv[0] == "fio" {
		return r.stdout, r.err
	}
	return nil, nil
}

func TestRunSequence(t *testing.T) {
	w := fixtureWorkload(t, "fsync-high", false, 1)
	box := &recorder{stdout: readFixture(t, "bind-fsync-high")}
	res, err := w.Run(context.Background(), workload.Target{Box: box, DataDir: "/var/lib/db"}, workload.Clock{Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, c := range box.calls {
		seq = append(seq, c[0]+" "+c[len(c)-1])
	}
	want := []string{"rm /var/lib/db/fio", "mkdir /var/lib/db/fio", "fio --ramp_time=1000ms", "rm /var/lib/db/fio"}
	if strings.Join(seq, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", seq, want)
	}
	if len(res.Ops) != 4 || res.Metrics["fsync_total"] != 1672 {
		t.Errorf("ops %d, metrics %v", len(res.Ops), res.Metrics)
	}

	box = &recorder{stdout: readFixture(t, "ramfs-fsync-high-direct"),
		err: &command.Error{Argv: []string{"fio"}, Output: "fio: looks like your file system does not support direct=1/buffered=0\n", Err: exitError(t, 1)}}
	w = fixtureWorkload(t, "fsync-high", true, 1)
	_, err = w.Run(context.Background(), workload.Target{Box: box, DataDir: "/mnt/ram"}, workload.Clock{Start: time.Now()})
	if !errors.Is(err, ErrDirectUnsupported) || !strings.Contains(err.Error(), "/mnt/ram/fio") {
		t.Errorf("err = %v", err)
	}
	if last := box.calls[len(box.calls)-1]; last[0] != "rm" {
		t.Errorf("the fio directory was not removed after a failure: %q", last)
	}
	if _, err := w.Run(context.Background(), workload.Target{DataDir: "/x"}, workload.Clock{}); err == nil {
		t.Error("a target without a box was accepted")
	}
}

// TestIntegration runs fsync-high through a native box's Exec, on the data directory's
// filesystem, for 2 s.
func TestIntegration(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "fio")
	box, _ := testdb.Start(t, postgresql.PostgreSQL{})
	c := DefaultConfig()
	c.Job, c.Duration, c.Warmup, c.Size = "fsync-high", 2*time.Second, 0, 32<<20
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clk := workload.Clock{Start: time.Now()}
	res, err := w.Run(ctx, workload.Target{DBMS: "postgresql", Box: box, DataDir: box.DataDir()}, clk)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]workload.OpSummary{}
	for _, o := range res.Ops {
		if o.Series == "latency" {
			ops[o.Op] = o
		}
	}
	wr, fs := ops["write"], ops[OpFsync]
	if wr.Count == 0 || fs.Count == 0 || len(ops) != 2 {
		t.Fatalf("ops = %v", ops)
	}
	// fsync every 5 writes.
	if r := float64(wr.Count) / float64(fs.Count); r < 4.9 || r > 5.1 {
		t.Errorf("%d writes for %d fsyncs", wr.Count, fs.Count)
	}
	if fs.P99 < fs.P50 || fs.P50 <= 0 || res.Metrics["fsync_p99_ns"] <= 0 || res.Metrics["write_iops"] <= 0 {
		t.Errorf("fsync %+v, metrics %v", fs, res.Metrics)
	}
	if res.Measured < 1900*time.Millisecond || res.Measured > 2200*time.Millisecond || res.ClientCPU <= 0 {
		t.Errorf("Measured %s, ClientCPU %s", res.Measured, res.ClientCPU)
	}
	end := time.Since(clk.Start)
	for _, iv := range res.Intervals {
		if iv.Start < 0 || iv.End > end {
			t.Errorf("interval off the run's clock (run lasted %s): %+v", end, iv)
		}
	}
	// The native box's data directory is a host path: fio's directory must be gone.
	if _, err := os.Stat(filepath.Join(box.DataDir(), Subdir)); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", Subdir, err)
	}
}
