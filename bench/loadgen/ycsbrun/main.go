// Command ycsbrun runs boxbench's YCSB generator once, as its own process, so that the
// side-by-side benchmark (bench/loadgen) can measure its CPU exactly as it measures go-ycsb's:
// from the rusage of the client process. It prints the result's summaries as JSON.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/workload"
	"github.com/boxbench/boxbench/workload/ycsb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ycsbrun:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg := ycsb.DefaultConfig()
	var t workload.Target
	var phase string
	flag.StringVar(&phase, "phase", "run", "load or run")
	drivers := map[string]ycsb.Opener{}
	var names []string
	for _, r := range builtin.Databases() {
		drivers[r.DBMS.Name()] = r.Driver(builtin.DriverOptions{})
		names = append(names, r.DBMS.Name())
	}
	flag.StringVar(&t.DBMS, "dbms", "redis", "one of "+strings.Join(names, ", "))
	flag.StringVar(&t.Endpoint.Host, "host", "127.0.0.1", "server host")
	flag.IntVar(&t.Endpoint.Port, "port", 6379, "server port")
	flag.StringVar(&t.User, "user", "", "database user")
	flag.StringVar(&t.Database, "database", "", "database name")
	flag.StringVar(&cfg.Mix, "mix", cfg.Mix, "YCSB mix")
	flag.StringVar(&cfg.Table, "table", cfg.Table, "table")
	flag.Int64Var(&cfg.RecordCount, "records", cfg.RecordCount, "record count")
	flag.IntVar(&cfg.Threads, "threads", cfg.Threads, "threads")
	flag.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured duration")
	flag.DurationVar(&cfg.Warmup, "warmup", 0, "warm-up")
	flag.Float64Var(&cfg.TargetRate, "rate", 0, "target ops/s (0: closed loop)")
	flag.IntVar(&cfg.ClientProcs, "procs", cfg.ClientProcs, "GOMAXPROCS during the run: 0 adapts, <0 leaves it alone")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	w, err := ycsb.New(cfg, drivers)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if phase == "load" {
		return w.Load(ctx, t)
	}
	res, err := w.Run(ctx, t, workload.Clock{Start: time.Now()})
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}
