package workloads

import (
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
	"github.com/boxbench/boxbench/workload/fio"
	"github.com/boxbench/boxbench/workload/stress"
	"github.com/boxbench/boxbench/workload/sysbench"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// All is the table, one row a kind, in the order the spec's messages list the kinds (the
// first measured one is the default type). The builders below map a row's spec fields onto its
// package's configuration.
func All() []Kind {
	return []Kind{
		{Name: "ycsb", Build: buildYCSB, Records: true, Remote: true, Own: ycsb.Own(),
			Sweeps: []string{"workload.targetRate", "workload.proportions.read", "workload.requestDistribution", "dataset.records"}},
		{Name: "sysbench", Build: buildSysbench, Own: sysbench.Own(),
			Sweeps: []string{"workload.rate", "workload.tableSize", "dataset.records"}, WholeSeconds: true},
		{Name: "fio", Build: buildFio, Neighbour: fioNeighbour, Threads: 1, Own: fio.Own(), Sweeps: []string{"workload.job.iodepth"}},
		{Name: "stress", Neighbour: stressNeighbour, Own: stress.Own()},
	}
}

func buildYCSB(e *spec.Experiment, w *spec.Workload, c Cell, env Env) (workload.Workload, error) {
	o := databases.DriverOptions{Consistency: ycsb.SectionOf(w.Own).Consistency, ReplicationFactor: c.ReplicationFactor}
	return ycsb.New(ycsbConfig(e, w, c), env.Drivers(o))
}

// ycsbConfig maps the spec onto the generator's configuration; unset fields keep YCSB's
// defaults.
func ycsbConfig(e *spec.Experiment, w *spec.Workload, c Cell) ycsb.Config {
	cfg, s := ycsb.DefaultConfig(), ycsb.SectionOf(w.Own)
	cfg.Mix, cfg.Proportions = c.Mix, nil
	if c.Mix == "custom" {
		cfg.Mix, cfg.Proportions = "", s.Proportions
	}
	cfg.ReadProportion = s.ReadProportion
	if s.RequestDistribution != "" {
		cfg.RequestDistribution = s.RequestDistribution
	}
	if s.KeyOrder != "" {
		cfg.KeyOrder = s.KeyOrder
	}
	cfg.RecordCount, cfg.FieldCount, cfg.FieldLength = c.Records, e.Dataset.FieldCount, e.Dataset.FieldLength
	if s.ReadAllFields != nil {
		cfg.ReadAllFields = *s.ReadAllFields
	}
	if s.WriteAllFields != nil {
		cfg.WriteAllFields = *s.WriteAllFields
	}
	cfg.ScanLength = s.ScanLengthMax
	cfg.Threads, cfg.Duration, cfg.Warmup = w.Threads, w.Duration.D(), w.Warmup.D()
	cfg.OperationCount, cfg.TargetRate, cfg.Interval = s.OperationCount, s.TargetRate, w.Interval.D()
	cfg.LoadThreads = s.LoadThreads
	if s.LoadBatch > 0 {
		cfg.LoadBatch = s.LoadBatch
	}
	// The generator's own seed is fixed unless the spec gives one, so every cell and every run
	// draws the same key sequence; the run order has its own seed.
	cfg.Seed = 1
	if e.Seed != nil {
		cfg.Seed = uint64(*e.Seed)
	}
	return cfg
}

func buildSysbench(_ *spec.Experiment, w *spec.Workload, c Cell, env Env) (workload.Workload, error) {
	drv, err := env.SysbenchDriver(c.DBMS)
	if err != nil {
		return nil, err
	}
	d, err := env.DBMS(c.DBMS)
	if err != nil {
		return nil, err
	}
	cfg := sysbench.DefaultConfig()
	s := sysbench.SectionOf(w.Own)
	cfg.DBMS, cfg.Driver, cfg.Test, cfg.Threads, cfg.Rate = d, drv, s.Test, w.Threads, s.Rate
	cfg.Duration, cfg.Warmup, cfg.Interval = w.Duration.D(), w.Warmup.D(), w.Interval.D()
	if s.Tables > 0 {
		cfg.Tables = s.Tables
	}
	switch {
	case s.TableSize > 0:
		cfg.TableSize = s.TableSize
	case c.Records > 0:
		cfg.TableSize = max(1, c.Records/int64(cfg.Tables))
	}
	return sysbench.New(cfg)
}

func buildFio(_ *spec.Experiment, w *spec.Workload, _ Cell, _ Env) (workload.Workload, error) {
	cfg := fio.DefaultConfig()
	fio.SectionOf(w.Own).Config(&cfg)
	cfg.Threads, cfg.Duration, cfg.Warmup = w.Threads, w.Duration.D(), w.Warmup.D()
	return fio.New(cfg)
}

func fioNeighbour(w *spec.Workload, window time.Duration) (workload.Workload, error) {
	cfg := fio.DefaultConfig()
	fio.SectionOf(w.Own).Config(&cfg)
	cfg.Duration, cfg.Warmup = window, 0
	if w.Threads > 0 {
		cfg.Threads = w.Threads
	}
	return fio.New(cfg)
}

func stressNeighbour(w *spec.Workload, window time.Duration) (workload.Workload, error) {
	return stress.New(stress.SectionOf(w.Own).Config(window))
}
