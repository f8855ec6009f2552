package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/stats"
	"github.com/boxbench/boxbench/testkit/testdb"
	"github.com/boxbench/boxbench/workload"
)

// TestSideBySide runs boxbench's generator (the ycsbrun binary) and go-ycsb v1.0.1 against the
// same native Redis and PostgreSQL, started through the product's native platform, for YCSB
// workloads A and C with the same threads, record count and request distribution (scrambled
// zipfian), closed loop, repeated and interleaved. Each client runs as its own process and its
// CPU is the rusage (user+system) the kernel reports for it at exit. Both clients run under
// each scheduling policy of LOADGEN_POLICIES (placement.clientPolicy: normal, and idle through
// chrt --idle 0), the same for both in each comparison. Opt-in: run.sh sets
// LOADGEN_SIDEBYSIDE=1 and the binaries' paths.
func TestSideBySide(t *testing.T) {
	if os.Getenv("LOADGEN_SIDEBYSIDE") == "" {
		t.Skip("benchmark; run bench/loadgen/run.sh")
	}
	p := params{goycsb: os.Getenv("GOYCSB"), ours: os.Getenv("YCSBRUN"), workloads: os.Getenv("GOYCSB_WORKLOADS"),
		reps: envInt("LOADGEN_REPS", 5), threads: envInt("LOADGEN_THREADS", 8),
		records: envInt("LOADGEN_RECORDS", 50000), dur: time.Duration(envInt("LOADGEN_SECONDS", 10)) * time.Second}
	var rows []row
	for _, db := range strings.Fields(envStr("LOADGEN_DBMS", "redis postgresql")) {
		base, err := databases.Get(db)
		if err != nil {
			t.Fatal(err)
		}
		box, d := testdb.Start(t, base)
		ep := box.Endpoint()
		t.Logf("%s at %s (%s)", db, ep, d.Name())
		p.load(t, db, box, strings.Fields(envStr("LOADGEN_CLIENTS", "boxbench go-ycsb")))
		for rep := 0; rep < p.reps; rep++ {
			for _, wl := range strings.Fields(envStr("LOADGEN_WORKLOADS", "a c")) {
				for _, pol := range strings.Fields(envStr("LOADGEN_POLICIES", "normal idle")) {
					clients := strings.Fields(envStr("LOADGEN_CLIENTS", "boxbench go-ycsb"))
					if rep%2 == 1 && len(clients) == 2 {
						clients[0], clients[1] = clients[1], clients[0]
					}
					for _, c := range clients {
						m := p.run(t, c, db, wl, pol, box)
						procs := ""
						if c == "boxbench" {
							procs = fmt.Sprintf(", GOMAXPROCS %d", m.procs)
						}
						t.Logf("%s %s %s %s rep %d: %.0f ops/s, read p50 %.0f µs p99 %.0f µs, %.2f µs CPU/op (%.2f user), "+
							"%.3f voluntary switches/op (load %.1f%s)", db, wl, pol, c, rep+1, m.tput, m.p50, m.p99,
							m.cpuPerOp, m.userPerOp, m.volPerOp, m.load, procs)
						rows = append(rows, row{db, wl, pol, c, m})
					}
				}
			}
		}
	}
	report := summarize(rows, p)
	fmt.Print(report)
	if out := os.Getenv("LOADGEN_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type params struct {
	goycsb, ours, workloads string
	reps, threads, records  int
	dur                     time.Duration
}

type measure struct {
	tput, p50, p99, cpuPerOp float64 // ops/s, µs (reads), µs CPU per operation
	userPerOp, volPerOp      float64 // µs user CPU per operation, voluntary context switches per operation
	ops, errors              int64   // operations issued, and of those failed
	procs                    int     // boxbench: the GOMAXPROCS its run reached (client_gomaxprocs)
	load                     float64 // the machine's 1-minute load average when the run started
}

type row struct {
	db, wl, policy, client string
	m                      measure
}

// The two clients use separate data (different tables or key names), both loaded once.
const ourTable = "bbtable"

func (p params) ourArgs(db string, box platform.Box) []string {
	ep := box.Endpoint()
	a := []string{"-dbms", db, "-host", ep.Host, "-port", strconv.Itoa(ep.Port), "-table", ourTable,
		"-records", strconv.Itoa(p.records), "-threads", strconv.Itoa(p.threads)}
	switch db {
	case "postgresql":
		a = append(a, "-user", "boxbench", "-database", "postgres")
	case "ferretdb":
		a = append(a, "-database", "bbycsb")
	case "cassandra":
		a = append(a, "-database", "ycsb")
	}
	return a
}

func (p params) ycsbArgs(db, wl string, box platform.Box) []string {
	ep := box.Endpoint()
	binding := db
	if db == "ferretdb" {
		binding = "mongodb" // go-ycsb's MongoDB binding, over FerretDB's wire protocol
	}
	a := []string{binding, "-P", p.workloads + "/workloada",
		"-p", "recordcount=" + strconv.Itoa(p.records), "-p", "threadcount=" + strconv.Itoa(p.threads),
		"-p", "operationcount=1000000000", "-p", "requestdistribution=zipfian", "-p", "readallfields=true"}
	if wl == "c" {
		a = append(a, "-p", "readproportion=1", "-p", "updateproportion=0")
	}
	switch db {
	case "redis":
		a = append(a, "-p", fmt.Sprintf("redis.addr=%s:%d", ep.Host, ep.Port))
	case "postgresql":
		a = append(a, "-p", "pg.host="+ep.Host, "-p", "pg.port="+strconv.Itoa(ep.Port),
			"-p", "pg.user=boxbench", "-p", "pg.db=postgres", "-p", "pg.sslmode=disable")
	case "etcd":
		a = append(a, "-p", fmt.Sprintf("etcd.endpoints=%s:%d", ep.Host, ep.Port))
	case "ferretdb":
		a = append(a, "-p", fmt.Sprintf("mongodb.url=mongodb://%s:%d/?directConnection=true", ep.Host, ep.Port),
			"-p", "mongodb.namespace=ycsb.usertable")
	}
	return a
}

// load loads both clients' data into the fresh server. go-ycsb goes first: its dropdata empties
// the whole server (FLUSHDB on Redis), which would take boxbench's data with it.
func (p params) load(t *testing.T, db string, box platform.Box, clients []string) {
	t.Helper()
	start := time.Now()
	args := append([]string{"load"}, p.ycsbArgs(db, "a", box)...)
	args = append(args, "-p", "dropdata=true", "-p", "batch.size=100")
	if !slices.Contains(clients, "go-ycsb") {
		// boxbench alone (LOADGEN_CLIENTS=boxbench): its CPU per operation, no comparison.
	} else if out, err := exec.Command(p.goycsb, args...).CombinedOutput(); err != nil {
		t.Fatalf("go-ycsb load: %v\n%s", err, out)
	}
	if out, err := exec.Command(p.ours, append([]string{"-phase", "load"}, p.ourArgs(db, box)...)...).CombinedOutput(); err != nil {
		t.Fatalf("boxbench load: %v\n%s", err, out)
	}
	t.Logf("%s: both loads took %v", db, time.Since(start).Round(time.Second))
}

func (p params) run(t *testing.T, client, db, wl, policy string, box platform.Box) measure {
	t.Helper()
	var argv []string
	if client == "boxbench" {
		argv = append([]string{p.ours, "-phase", "run", "-mix", wl, "-duration", p.dur.String()}, p.ourArgs(db, box)...)
	} else {
		argv = append([]string{p.goycsb, "run"}, p.ycsbArgs(db, wl, box)...)
	}
	switch policy {
	case "normal":
	case "idle":
		argv = append([]string{"chrt", "--idle", "0"}, argv...) // chrt execs the client: same pid
	default:
		t.Fatalf("LOADGEN_POLICIES: %q is not a policy (valid: normal, idle)", policy)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	load := loadAverage()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if client == "go-ycsb" {
		// v1.0.1 ignores maxexecutiontime: stop it with SIGINT, as timeout --foreground -s INT
		// would; it prints its summary on the way out.
		time.AfterFunc(p.dur, func() { _ = cmd.Process.Signal(syscall.SIGINT) })
	}
	err := cmd.Wait()
	if err != nil && client == "boxbench" {
		t.Fatalf("%s %v: %v\n%s", client, cmd.Args, err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	user := time.Duration(ru.Utime.Nano())
	var m measure
	if client == "boxbench" {
		m = parseOurs(t, stdout.Bytes())
	} else {
		m = parseGoYCSB(t, stdout.String())
	}
	if m.ops == 0 {
		t.Fatalf("%s %s %s: no operations\n%s\n%s", client, db, wl, stdout.String(), stderr.String())
	}
	// A read of a missing record is an error to both clients: a run with errors measured
	// something other than the workload (e.g. data another load removed).
	if m.errors > m.ops/1000 {
		t.Fatalf("%s %s %s: %d of %d operations failed\n%s", client, db, wl, m.errors, m.ops, stdout.String())
	}
	m.cpuPerOp = float64(cpu.Microseconds()) / float64(m.ops)
	m.userPerOp = float64(user.Microseconds()) / float64(m.ops)
	m.volPerOp = float64(ru.Nvcsw) / float64(m.ops)
	m.load = load
	return m
}

func parseOurs(t *testing.T, out []byte) measure {
	var res workload.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("parse boxbench result: %v\n%s", err, out)
	}
	m := measure{tput: res.Metrics["throughput_ops_per_second"], ops: int64(res.Metrics["operations_total"]),
		procs: int(res.Metrics["client_gomaxprocs"])}
	for _, s := range res.Ops {
		if s.Series != "latency" {
			continue
		}
		m.errors += s.Errors
		if s.Op == "read" {
			m.p50, m.p99 = float64(s.P50)/1e3, float64(s.P99)/1e3
		}
	}
	return m
}

// go-ycsb's plain summary line, e.g.
// READ   - Takes(s): 10.0, Count: 123, OPS: 12.3, Avg(us): 80, Min(us): 20, Max(us): 900,
// 50th(us): 70, 90th(us): 100, 95th(us): 120, 99th(us): 200, 99.9th(us): 400, 99.99th(us): 800
var ycsbLine = regexp.MustCompile(`(?m)^(\w+)\s+- Takes\(s\): ([\d.]+), Count: (\d+), OPS: ([\d.]+), .*50th\(us\): (\d+), 90th\(us\): \d+, 95th\(us\): \d+, 99th\(us\): (\d+)`)

func parseGoYCSB(t *testing.T, out string) measure {
	// The last summary is the final one (go-ycsb also prints one every 10 s).
	idx := strings.LastIndex(out, "Run finished")
	if idx < 0 {
		idx = strings.LastIndex(out, "Got signal")
	}
	if idx < 0 {
		t.Fatalf("go-ycsb printed no final summary:\n%s", out)
	}
	var m measure
	var takes float64
	for _, g := range ycsbLine.FindAllStringSubmatch(out[idx:], -1) {
		if g[1] == "TOTAL" {
			continue
		}
		n, _ := strconv.ParseInt(g[3], 10, 64)
		m.ops += n // errors too (READ_ERROR…): operations the client issued
		if strings.HasSuffix(g[1], "_ERROR") {
			m.errors += n
		}
		tk, _ := strconv.ParseFloat(g[2], 64)
		takes = max(takes, tk)
		if g[1] == "READ" {
			m.p50, _ = strconv.ParseFloat(g[5], 64)
			m.p99, _ = strconv.ParseFloat(g[6], 64)
		}
	}
	if takes > 0 {
		m.tput = float64(m.ops) / takes
	}
	return m
}

// summarize renders the median and range of every measure per (dbms, workload, policy,
// client), and boxbench's CPU per operation relative to go-ycsb's under the same policy.
func summarize(rows []row, p params) string {
	type key struct{ db, wl, policy, client string }
	g := map[key][]measure{}
	var keys []key
	for _, r := range rows {
		k := key{r.db, r.wl, r.policy, r.client}
		if _, ok := g[k]; !ok {
			keys = append(keys, k)
		}
		g[k] = append(g[k], r.m)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.db != b.db {
			return a.db > b.db
		}
		if a.wl != b.wl {
			return a.wl < b.wl
		}
		if a.policy != b.policy {
			return a.policy < b.policy
		}
		return a.client < b.client
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%d threads, %d records, %v per run, %d runs per cell, interleaved; median [min–max]\n\n",
		p.threads, p.records, p.dur, p.reps)
	b.WriteString("| dbms | workload | policy | client | throughput (ops/s) | read p50 (µs) | read p99 (µs) | " +
		"client CPU (µs/op) | of which user (µs/op) | sleeps (voluntary switches/op) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range keys {
		ms := g[k]
		col := func(f func(measure) float64, prec int) string {
			s := summarizeOf(ms, f)
			return fmt.Sprintf("%.*f [%.*f–%.*f]", prec, s.Median, prec, s.Min, prec, s.Max)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k.db, strings.ToUpper(k.wl), k.policy,
			k.client, col(func(m measure) float64 { return m.tput }, 0), col(func(m measure) float64 { return m.p50 }, 0),
			col(func(m measure) float64 { return m.p99 }, 0), col(func(m measure) float64 { return m.cpuPerOp }, 2),
			col(func(m measure) float64 { return m.userPerOp }, 2), col(func(m measure) float64 { return m.volPerOp }, 2))
	}
	procs, loads := []int{}, []float64{}
	for _, r := range rows {
		if r.client == "boxbench" {
			procs = append(procs, r.m.procs)
		}
		loads = append(loads, r.m.load)
	}
	sort.Ints(procs)
	sort.Float64s(loads)
	if len(procs) > 0 {
		fmt.Fprintf(&b, "\nboxbench ran with GOMAXPROCS %d–%d (client_gomaxprocs, Config.ClientProcs); "+
			"1-minute load average at the start of the runs: %.1f–%.1f\n", procs[0], procs[len(procs)-1],
			loads[0], loads[len(loads)-1])
	}
	b.WriteString("\nboxbench CPU/op ÷ go-ycsb CPU/op under the same policy, ratio of the medians [range of the " +
		"ratios of the runs of one repetition]:\n\n")
	for _, k := range keys {
		o := key{k.db, k.wl, k.policy, "go-ycsb"}
		if k.client != "boxbench" || len(g[o]) == 0 {
			continue
		}
		cpu := func(m measure) float64 { return m.cpuPerOp }
		var pr []float64
		for i := 0; i < len(g[k]) && i < len(g[o]); i++ {
			pr = append(pr, g[k][i].cpuPerOp/g[o][i].cpuPerOp)
		}
		ratios := stats.Summarize(pr)
		fmt.Fprintf(&b, "- %s %s, policy %s: %.2f [%.2f–%.2f]\n", k.db, strings.ToUpper(k.wl), k.policy,
			summarizeOf(g[k], cpu).Median/summarizeOf(g[o], cpu).Median, ratios.Min, ratios.Max)
	}
	return b.String()
}

// loadAverage is the 1-minute load average (0 if unknown): the shared machine's state.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// summarizeOf summarizes one figure of the measures (median, min and max are what is shown).
func summarizeOf(ms []measure, f func(measure) float64) stats.Summary {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	return stats.Summarize(v)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envStr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
