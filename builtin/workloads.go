package builtin

import (
	"fmt"

	"github.com/boxbench/boxbench/driver/mysql"
	"github.com/boxbench/boxbench/driver/postgres"
	"github.com/boxbench/boxbench/driver/redis"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// drivers are the built-in generator's database clients, by dbms name.
var drivers = map[string]ycsb.Opener{
	"postgresql": postgres.New,
	"mariadb":    mysql.New,
	"redis":      redis.New,
}

// Workload builds (and validates) the workload of one cell.
func Workload(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
	switch e.Workload.Type {
	case "ycsb":
		return ycsb.New(ycsbConfig(e, c), drivers)
	}
	return nil, fmt.Errorf("workload type %q is not built in (valid: ycsb)", e.Workload.Type)
}

// ycsbConfig maps the spec onto the generator's configuration; unset fields keep YCSB's
// defaults.
func ycsbConfig(e *spec.Experiment, c *plan.Cell) ycsb.Config {
	w := e.Workload
	cfg := ycsb.DefaultConfig()
	cfg.Mix, cfg.Proportions = c.Mix, nil
	if c.Mix == "custom" {
		cfg.Mix, cfg.Proportions = "", w.Proportions
	}
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
