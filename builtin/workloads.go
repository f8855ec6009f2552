package builtin

import (
	"fmt"
	"github.com/boxbench/boxbench/workload/stress"
	"strings"
	"time"

	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
	"github.com/boxbench/boxbench/workload/fio"
	"github.com/boxbench/boxbench/workload/sysbench"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// Workload builds (and validates) the workload of one cell.
func Workload(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
	return table(Databases()).workload(e, c)
}

// workload builds the workload of one cell with the databases of t.
func (t table) workload(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
	w := e.WorkloadFor(c.Workload, c.Params) // the cell's sweep keys applied
	switch w.Type {
	case "ycsb":
		o := DriverOptions{Consistency: w.Consistency}
		if c.Topology != nil {
			o.ReplicationFactor = c.Topology.ReplicationFactor
		}
		return ycsb.New(ycsbConfig(e, w, c), t.drivers(o))
	case "sysbench":
		drv, err := t.sysbenchDriver(c.DBMS)
		if err != nil {
			return nil, err
		}
		d, err := t.dbms(c.DBMS)
		if err != nil {
			return nil, err
		}
		cfg := sysbench.DefaultConfig()
		cfg.DBMS, cfg.Driver, cfg.Test, cfg.Threads, cfg.Rate = d, drv, w.Test, w.Threads, w.Rate
		cfg.Duration, cfg.Warmup, cfg.Interval = w.Duration.D(), w.Warmup.D(), w.Interval.D()
		if w.Tables > 0 {
			cfg.Tables = w.Tables
		}
		switch {
		case w.TableSize > 0:
			cfg.TableSize = w.TableSize
		case c.Records > 0:
			cfg.TableSize = max(1, c.Records/int64(cfg.Tables))
		}
		return sysbench.New(cfg)
	case "fio":
		cfg := fio.DefaultConfig()
		cfg.Job, cfg.Threads = w.Job, w.Threads
		cfg.Duration, cfg.Warmup = w.Duration.D(), w.Warmup.D()
		if w.Direct != nil {
			cfg.Direct = *w.Direct
		}
		if w.Size > 0 {
			cfg.Size = int64(w.Size)
		}
		return fio.New(cfg)
	}
	return nil, fmt.Errorf("workload type %q is not built in (valid: ycsb, sysbench, fio)", w.Type)
}

// ycsbConfig maps the spec onto the generator's configuration; unset fields keep YCSB's
// defaults.
func ycsbConfig(e *spec.Experiment, w *spec.Workload, c *plan.Cell) ycsb.Config {
	cfg := ycsb.DefaultConfig()
	cfg.Mix, cfg.Proportions = c.Mix, nil
	if c.Mix == "custom" {
		cfg.Mix, cfg.Proportions = "", w.Proportions
	}
	cfg.ReadProportion = w.ReadProportion
	if w.RequestDistribution != "" {
		cfg.RequestDistribution = w.RequestDistribution
	}
	if w.KeyOrder != "" {
		cfg.KeyOrder = w.KeyOrder
	}
	cfg.RecordCount, cfg.FieldCount, cfg.FieldLength = c.Records, e.Dataset.FieldCount, e.Dataset.FieldLength
	if w.ReadAllFields != nil {
		cfg.ReadAllFields = *w.ReadAllFields
	}
	if w.WriteAllFields != nil {
		cfg.WriteAllFields = *w.WriteAllFields
	}
	cfg.ScanLength = w.ScanLengthMax
	cfg.Threads, cfg.Duration, cfg.Warmup = w.Threads, w.Duration.D(), w.Warmup.D()
	cfg.OperationCount, cfg.TargetRate, cfg.Interval = w.OperationCount, w.TargetRate, w.Interval.D()
	cfg.LoadThreads = w.LoadThreads
	if w.LoadBatch > 0 {
		cfg.LoadBatch = w.LoadBatch
	}
	// The generator's own seed is fixed unless the spec gives one, so every cell and every run
	// draws the same key sequence; the run order has its own seed.
	cfg.Seed = 1
	if e.Seed != nil {
		cfg.Seed = uint64(*e.Seed)
	}
	return cfg
}

// Neighbour builds a neighbour's workload to run for the whole measured window.
func Neighbour(ns *spec.Neighbour, window time.Duration) (workload.Workload, error) {
	w := ns.Workload
	switch w.Type {
	case "fio":
		cfg := fio.DefaultConfig()
		cfg.Job, cfg.Duration, cfg.Warmup = w.Job, window, 0
		if w.Threads > 0 {
			cfg.Threads = w.Threads
		}
		if w.Direct != nil {
			cfg.Direct = *w.Direct
		}
		if w.Size > 0 {
			cfg.Size = int64(w.Size)
		}
		return fio.New(cfg)
	case "stress":
		return stress.New(stress.Config{CPU: w.CPU, VM: w.VM, VMBytes: int64(w.VMBytes), Duration: window})
	}
	return nil, fmt.Errorf("workload type %q cannot run as a neighbour (valid: %s)", w.Type, strings.Join(spec.NeighbourTypes, ", "))
}
