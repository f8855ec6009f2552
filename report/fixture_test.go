package report

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
)

// The fixtures are synthetic but shaped like real runs: a closed-loop YCSB client with 8
// threads against Redis, latency ≈ threads / throughput with a log-normal body and a slow tail,
// 1 s intervals (3 s warm-up, 10 s measured), and 1 s telemetry on the same clock.

const (
	fixThreads  = 8
	fixWarmup   = 3
	fixMeasured = 10
	fixSamples  = 400 // latency values drawn per interval and op; each stands for count/fixSamples ops
)

var fixStart = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

// fixCell describes how a synthetic cell behaves.
type fixCell struct {
	params   map[string]string
	skipped  string
	baseline map[string]string // params overriding this cell's to name its baseline; nil: none
	thr      float64           // mean throughput, ops/s
	cv       float64           // run-to-run coefficient of variation
	mix      map[string]float64
	reps     int
	failed   map[int]string            // rep → reason
	warn     map[int][]results.Warning // rep → warnings
	tail     float64                   // share of operations in the slow tail
	throttle float64                   // share of CFS periods throttled
	softirq  float64                   // host soft-interrupt cores
	ioWrite  float64                   // bytes/s written by the database
	noHist   bool                      // store ops without histograms
	open     *openLoop                 // an open-loop sweep cell (sweep_fixture_test.go)
	duets    map[int]fixDuet           // rep → its duet (duet_fixture_test.go)
	orch     *results.Orchestrator     // what each run recorded of its cluster
	nodes    map[string]float64        // node → its CPU cores busy, as node_ metrics
	// where adds a run's account of where the time goes: metrics and facts (where_test.go).
	where func(runID string) (metrics map[string]float64, facts map[string]string)
}

func fixID(params map[string]string) string {
	var seg []string
	for _, k := range spec.MatrixKeys {
		if v, ok := params[k]; ok {
			seg = append(seg, k+"="+v)
		}
	}
	return strings.Join(seg, "/")
}

func with(p map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range p {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

const quickstartSpec = `# The default experiment: what does running Redis in Docker cost, by storage and network path?
apiVersion: boxbench/v1alpha1
kind: Experiment
name: quickstart
dbms: redis
workload: {type: ycsb, threads: 8, duration: 10s, warmup: 3s}
dataset: {records: 50000, fieldCount: 10, fieldLength: 100}
limits: {cpus: 1, memory: 1GiB}
matrix:
  platform: [native, docker]
  storage: [bind, overlay]
  network: [host, bridge-published]
  mix: [read-heavy, write-heavy]
repetitions: 5
order: randomized
baseline: {platform: native, storage: bind, network: host}
`

var fixEnv = map[string]string{
	"kernel": "6.1.0-31-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.128-1 (2025-02-07)", "hostname": "bench-07",
	"arch": "x86_64", "cpu_model": "AMD EPYC 7B13", "num_cpu": "4", "cpus_online": "0-3",
	"mem_total": "16370184 kB", "os": "Debian GNU/Linux 12 (bookworm)", "cgroup_mode": "v2",
	"cpu_governor": "performance", "go_version": "go1.26.8", "boxbench_version": "0.3.0",
	"boxbench_commit": "85b219c", "dbms_version": "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=c4e7f6bf175a885b",
	"dbms_package": "redis-server 5:7.0.15-1~deb12u3",
}

// quickstartCells is the README's default experiment, with a baseline every cell can use.
func quickstartCells() []fixCell {
	mixes := map[string]map[string]float64{
		"read-heavy":  {"read": 0.95, "update": 0.05},
		"write-heavy": {"read": 0.5, "update": 0.5},
	}
	base := map[string]float64{"read-heavy": 51800, "write-heavy": 44300}
	var cells []fixCell
	for _, mix := range []string{"read-heavy", "write-heavy"} {
		for _, pl := range []string{"native", "docker"} {
			for _, st := range []string{"bind", "overlay"} {
				for _, nw := range []string{"host", "bridge-published"} {
					p := map[string]string{"platform": pl, "storage": st, "network": nw, "mix": mix}
					c := fixCell{params: p, mix: mixes[mix], reps: 5, cv: 0.012, tail: 0.004, softirq: 0.04,
						baseline: map[string]string{"platform": "native", "storage": "bind", "network": "host"}}
					c.ioWrite = 180e3
					if mix == "write-heavy" {
						c.ioWrite = 3.6e6
					}
					f := 1.0
					// Reasons as the planner joins them (errors.Join: one per line).
					var why []string
					if pl == "native" && st == "overlay" {
						why = append(why, "platform native cannot provide storage overlay: no container layer")
					}
					if pl == "native" && nw != "host" {
						why = append(why, "platform native cannot provide network bridge-published: no network namespace")
					}
					c.skipped = strings.Join(why, "\n")
					if pl == "docker" {
						f *= 0.992
						c.cv = 0.015
					}
					if st == "overlay" && mix == "write-heavy" {
						f *= 0.93 // AOF appends through overlayfs copy-up and its journal
						c.tail = 0.012
						c.cv = 0.022
						c.throttle = 0.071
					}
					if nw == "bridge-published" {
						f *= 0.77 // docker-proxy and NAT on every request
						c.softirq = 0.21
						c.cv = 0.018
					}
					c.thr = base[mix] * f
					cells = append(cells, c)
				}
			}
		}
	}
	for i := range cells {
		c := &cells[i]
		id := fixID(c.params)
		switch id {
		case "platform=native/storage=bind/network=host/mix=read-heavy":
			c.warn = map[int][]results.Warning{3: {{Code: "client_cpu_saturated", Severity: "warning",
				Message: "the client used 3.64 of its 4 CPU cores (91 %, from its own accounting) during the measured window, " +
					"at or above 90 %: the load generator may be the bottleneck, so throughput and latency may measure the " +
					"client rather than the database"}}}
		case "platform=docker/storage=overlay/network=bridge-published/mix=write-heavy":
			c.failed = map[int]string{4: "measure: ycsb: 8 workers: read tcp 127.0.0.1:51614->127.0.0.1:32768: connection reset by peer"}
		}
		if c.throttle > 0 {
			c.warn = map[int][]results.Warning{}
			for rep := 1; rep <= c.reps; rep++ {
				if rep%2 == 1 {
					c.warn[rep] = []results.Warning{{Code: "db_cpu_throttled", Severity: "warning",
						Message: fmt.Sprintf("the database was throttled in %.1f %% of its CFS periods after warm-up (%d of 100), above 5 %%: "+
							"it ran into its CPU limit (1 cpus), so throughput is set by the limit and latency includes waits for the next "+
							"period; compare it only with cells that have the same limit", c.throttle*100+float64(rep)/10, int(c.throttle*100)+rep/2)}}
				}
			}
		}
	}
	return cells
}

// edgeCells exercise what the report must survive: a baseline without ok runs, an
// underpowered comparison, a single ok run, a skipped cell, a cell without a baseline, a run
// without histograms.
func edgeCells() []fixCell {
	mix := map[string]float64{"read": 1}
	p := func(pl, st string) map[string]string { return map[string]string{"platform": pl, "storage": st} }
	bl := map[string]string{"platform": "native"}
	return []fixCell{
		{params: p("native", "bind"), baseline: bl, thr: 30000, cv: 0.02, mix: mix, reps: 2,
			failed: map[int]string{1: "provision: start redis-server: exit status 1", 2: "provision: start redis-server: exit status 1"}},
		{params: p("docker", "bind"), baseline: bl, thr: 29000, cv: 0.02, mix: mix, reps: 2},
		{params: p("native", "tmpfs"), baseline: bl, thr: 33000, cv: 0.01, mix: mix, reps: 2},
		{params: p("docker", "tmpfs"), baseline: bl, thr: 31000, cv: 0.01, mix: mix, reps: 2, noHist: true},
		{params: p("native", "volume"), baseline: bl, skipped: "platform native cannot provide storage volume: no container engine"},
		{params: p("docker", "volume"), baseline: bl, thr: 28000, cv: 0.01, mix: mix, reps: 1},
		{params: p("kata", "volume"), thr: 20000, cv: 0.03, mix: mix, reps: 3},
	}
}

// writeFixture stores the cells as an experiment in dir.
func writeFixture(t testing.TB, dir, name, specText string, cells []fixCell) {
	t.Helper()
	st, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	env, _ := json.Marshal(fixEnv)
	if err := st.SetMeta(map[string]string{"experiment_id": name + "-20250314", "name": name, "spec": specText,
		"seed": "1789", "created_at": fixStart.Format(time.RFC3339), "boxbench_version": "0.3.0 85b219c",
		"env": string(env)}); err != nil {
		t.Fatal(err)
	}
	var recs []results.CellRecord
	maxReps := 0
	for _, c := range cells {
		rec := results.CellRecord{ID: fixID(c.params), Params: c.params, SkippedReason: c.skipped}
		if c.baseline != nil {
			rec.BaselineID = fixID(with(c.params, flatten(c.baseline)...))
		}
		recs = append(recs, rec)
		maxReps = max(maxReps, c.reps)
	}
	if err := st.PutCells(recs); err != nil {
		t.Fatal(err)
	}
	if name == "quickstart" {
		if err := st.Event("adaptive", "platform=docker/storage=overlay/network=bridge-published/mix=write-heavy: run 5 added: 95 % CI half-width 4.1 % of the mean > target 2 %"); err != nil {
			t.Fatal(err)
		}
	}
	// Interleave runs in rounds, shuffled per round, as the planner does.
	seq := 0
	for rep := 1; rep <= maxReps; rep++ {
		order := rand.New(rand.NewPCG(1789, uint64(rep))).Perm(len(cells))
		for _, i := range order {
			c := cells[i]
			if c.skipped != "" || rep > c.reps {
				continue
			}
			seq++
			rec := fixRun(c, rep, seq)
			if err := st.PutRun(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func flatten(m map[string]string) []string {
	var kv []string
	for _, k := range spec.MatrixKeys {
		if v, ok := m[k]; ok {
			kv = append(kv, k, v)
		}
	}
	return kv
}

func fixRun(c fixCell, rep, seq int) *results.RunRecord {
	cellID := fixID(c.params)
	runID := fmt.Sprintf("%s#%d", cellID, rep)
	h := fnv.New64a()
	h.Write([]byte(runID))
	rng := rand.New(rand.NewPCG(h.Sum64(), 7))
	started := fixStart.Add(time.Duration(seq) * 40 * time.Second)
	rec := &results.RunRecord{ID: runID, CellID: cellID, Rep: rep, Seq: seq, Status: "ok",
		Started: started, Ended: started.Add(34 * time.Second),
		Env:   map[string]string{"kernel": fixEnv["kernel"], "dbms_version": fixEnv["dbms_version"]},
		Facts: map[string]string{"seed": "redis-50000x10x100", "host_data_dir": "/var/tmp/boxbench/" + runID},
	}
	if c.params["platform"] == "docker" {
		rec.Env["docker_version"] = "28.5.2"
		rec.Env["storage_driver"] = "overlay2"
		rec.Env["runtime"] = "runc 1.3.3"
	}
	rec.LimitsRequested = map[string]any{"cpus": 1, "memory_bytes": 1 << 30}
	rec.LimitsApplied = map[string]any{"cpus": 1, "memory_bytes": 1 << 30}
	if reason, ok := c.failed[rep]; ok {
		rec.Status, rec.Reason = "failed", reason
		rec.LogTail = "1:M 14 Mar 2025 09:12:03.112 * Ready to accept connections tcp\n"
		rec.Series = fixTelemetry(c, rng, 6)
		return rec
	}
	if c.open != nil {
		rec.ClientCPUs = "0"
		rec.LimitsApplied = map[string]any{"limits": map[string]any{"cpuset": "1", "memory_bytes": 1 << 30}}
		rec.Result = sweepResult(c, rng)
		rec.Series = sweepTelemetry(c, rng)
		return rec
	}
	thr := c.thr * (1 + c.cv*rng.NormFloat64())
	if d, ok := c.duets[rep]; ok {
		rec.Duet, thr = d.Duet, thr*d.drift
	}
	if c.orch != nil {
		rec.Orchestrator = *c.orch
	}
	rec.Result = fixResult(c, thr, rng, rep)
	for node, cores := range c.nodes {
		rec.Result.Metrics[results.NodeMetric(node, "cpu_cores")] = cores * thr / c.thr
	}
	rec.Series = fixTelemetry(c, rng, fixWarmup+fixMeasured+1)
	rec.Warnings = c.warn[rep]
	if c.where != nil {
		metrics, facts := c.where(runID)
		for k, v := range metrics {
			rec.Result.Metrics[k] = v
		}
		for k, v := range facts {
			rec.Facts[k] = v
		}
	}
	return rec
}

// fixResult draws the run's intervals and summarises the measured ones per op.
func fixResult(c fixCell, thr float64, rng *rand.Rand, rep int) *workload.Result {
	res := &workload.Result{Mode: workload.ModeClosed, Threads: fixThreads,
		Warmup: fixWarmup * time.Second, Measured: fixMeasured * time.Second,
		ClientCPU: time.Duration((0.55 + 0.05*rng.Float64()) * float64(fixMeasured*time.Second)),
		// Workload metrics, and shares as a neighbour's cell has them (not drawn from rng, so
		// the other figures stay as they were).
		Metrics: map[string]float64{"client_cpu_per_op_ns": 10000 + 100*float64(rep)}}
	if c.throttle > 0 {
		res.Metrics["io_share_configured_ratio"] = 0.7
		res.Metrics["io_share_obtained_ratio"] = 0.3 + 0.02*float64(rep)
	}
	ops := sortedOps(c.mix)
	whole := map[string]*hdrhistogram.Histogram{}
	for _, op := range ops {
		whole[op] = hdrhistogram.New(1, 60_000_000_000, 3)
	}
	for i := 0; i < fixWarmup+fixMeasured; i++ {
		phase, ramp := workload.PhaseMeasure, 1.0
		if i < fixWarmup {
			phase, ramp = workload.PhaseWarmup, []float64{0.55, 0.86, 0.97}[i]
		}
		rate := thr * ramp * (1 + 0.025*rng.NormFloat64())
		for _, op := range ops {
			hist := hdrhistogram.New(1, 60_000_000_000, 3)
			count := int64(rate * c.mix[op])
			median := float64(fixThreads) / rate * 1e9 * 0.82 / ramp // cold caches in warm-up
			if op == "update" {
				median *= 1.18
			}
			drawLatencies(hist, rng, count, median, c.tail)
			if phase == workload.PhaseMeasure {
				whole[op].Merge(hist)
			}
			res.Intervals = append(res.Intervals, workload.Interval{
				Start: time.Duration(i+1) * time.Second, End: time.Duration(i+2) * time.Second,
				Phase: phase, Op: op, Series: LatencySeries, Count: count, Hist: encodeHist(hist, c.noHist)})
		}
	}
	for _, op := range ops {
		w := whole[op]
		v := w.ValueAtPercentilesSlice([]float64{50, 90, 95, 99, 99.9})
		res.Ops = append(res.Ops, workload.OpSummary{Op: op, Series: LatencySeries, Count: w.TotalCount(),
			Throughput: float64(w.TotalCount()) / res.Measured.Seconds(),
			P50:        v[0], P90: v[1], P95: v[2], P99: v[3], P999: v[4], Max: w.Max(), Mean: w.Mean(),
			Hist: encodeHist(w, c.noHist)})
	}
	return res
}

// drawLatencies records count operations: a log-normal body around median and a slow tail.
func drawLatencies(h *hdrhistogram.Histogram, rng *rand.Rand, count int64, median, tail float64) {
	per, rest := count/fixSamples, count%fixSamples
	for j := int64(0); j < fixSamples; j++ {
		n := per
		if j < rest {
			n++
		}
		if n == 0 {
			continue
		}
		v := median * math.Exp(0.32*rng.NormFloat64())
		if u := rng.Float64(); u < tail {
			v = median * 6 * math.Exp(0.7*rng.NormFloat64())
		} else if u < tail+0.03 {
			v = median * 2.2 * math.Exp(0.25*rng.NormFloat64())
		}
		_ = h.RecordValues(int64(v), n)
	}
}

func encodeHist(h *hdrhistogram.Histogram, skip bool) []byte {
	if skip {
		return nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		panic(err)
	}
	return b
}

func sortedOps(mix map[string]float64) []string {
	var ops []string
	for _, op := range []string{"insert", "read", "scan", "update"} {
		if mix[op] > 0 {
			ops = append(ops, op)
		}
	}
	return ops
}

// fixTelemetry samples every second from T=1 s (the pre-run sample) to T=n s.
func fixTelemetry(c fixCell, rng *rand.Rand, n int) []results.Point {
	var pts []results.Point
	add := func(t int, src, metric, label string, v float64) {
		pts = append(pts, results.Point{T: time.Duration(t) * time.Second, Source: src, Metric: metric, Label: label, Value: v})
	}
	for t := 1; t <= n; t++ {
		load := 1.0
		if t == 1 {
			load = 0.02
		} else if t <= 1+fixWarmup {
			load = []float64{0.6, 0.88, 0.97}[t-2]
		}
		noise := func(s float64) float64 { return math.Max(0, 1+s*rng.NormFloat64()) }
		dbCPU := math.Min(1, 0.9*load*noise(0.03))
		add(t, "db", "cpu_usage_seconds_per_second", "", dbCPU)
		add(t, "db", "cpu_periods_per_interval", "", math.Round(10*math.Max(load, 0.1)))
		thr := 0.0
		if c.throttle > 0 && load > 0.5 {
			thr = math.Round(10 * c.throttle * noise(0.8))
		}
		add(t, "db", "cpu_throttled_periods_per_interval", "", thr)
		add(t, "db", "cpu_throttled_seconds_per_second", "", thr*0.004)
		add(t, "db", "memory_usage_bytes", "", 212e6+1e6*float64(t))
		add(t, "db", "io_read_bytes_per_second", "", 0)
		add(t, "db", "io_write_bytes_per_second", "", c.ioWrite*load*noise(0.15))
		add(t, "db", "disk_write_bytes_per_second", "vda", c.ioWrite*1.1*load*noise(0.15))
		add(t, "db", "disk_read_bytes_per_second", "vda", 0)
		add(t, "client", "cpu_user_seconds_per_second", "", 0.42*load*noise(0.04))
		add(t, "client", "cpu_system_seconds_per_second", "", 0.16*load*noise(0.04))
		add(t, "host", "cpu_softirq_seconds_per_second", "", 0.01+c.softirq*load*noise(0.1))
		add(t, "host", "cpu_idle_seconds_per_second", "", 4-1.7*load)
	}
	return pts
}
