package report

import (
	"math"
	"math/rand/v2"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/workload"
)

// The sweep fixture: an open-loop YCSB client offering a doubling rate to Redis natively and
// in Docker through its published port. Each box has a capacity (ops/s); below it throughput
// follows the offered load and latency is the service time, past it throughput stays at the
// capacity and the corrected latency grows with the backlog (the operations due but not yet
// sent), while the service time stays near the server's own cost. Natively the server's CPU
// is what runs out; through the published port the proxy's CPU (outside the box's group) is.

const sweepSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: sweep
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 32, duration: 10s, warmup: 3s}
dataset: {records: 20000}
limits: {memory: 1GiB}
placement: {client: "0", server: "1"}
matrix:
  zip: {platform: [native, docker], network: [host, bridge-published]}
  workload.targetRate: [5000, 10000, 20000, 40000, 80000]
repetitions: 3
baseline: {platform: native, network: host}
`

// openLoop is how a fixture cell behaves under an offered rate.
type openLoop struct {
	rate, capacity float64 // ops/s
	serviceUs      float64 // median service time when idle, µs
	proxy          bool    // a userland proxy outside the box's group does the work
}

func sweepCells() []fixCell {
	mix := map[string]float64{"read": 0.95, "update": 0.05}
	var cells []fixCell
	for _, pl := range []struct {
		platform, network string
		capacity, service float64
		proxy             bool
	}{{"native", "host", 31000, 70, false}, {"docker", "bridge-published", 12500, 160, true}} {
		for _, rate := range []float64{5000, 10000, 20000, 40000, 80000} {
			p := map[string]string{"platform": pl.platform, "network": pl.network, "workload.targetRate": num(rate)}
			cells = append(cells, fixCell{params: p, mix: mix, reps: 3, cv: 0.01,
				baseline: map[string]string{"platform": "native", "network": "host"},
				open:     &openLoop{rate: rate, capacity: pl.capacity, serviceUs: pl.service, proxy: pl.proxy}})
		}
	}
	return cells
}

// sweepResult draws an open-loop run: per interval, per op, both series.
func sweepResult(c fixCell, rng *rand.Rand) *workload.Result {
	o := c.open
	capacity := o.capacity * (1 + c.cv*rng.NormFloat64())
	thr := math.Min(o.rate, capacity)
	rho := math.Min(thr/capacity, 0.97)
	res := &workload.Result{Mode: workload.ModeOpen, TargetOps: o.rate, Threads: 32,
		Warmup: fixWarmup * time.Second, Measured: fixMeasured * time.Second,
		ClientCPU: time.Duration(thr * 9e3 * fixMeasured)}
	ops := sortedOps(c.mix)
	whole := map[string][2]*hdrhistogram.Histogram{}
	for _, op := range ops {
		whole[op] = [2]*hdrhistogram.Histogram{hdrhistogram.New(1, 600_000_000_000, 3), hdrhistogram.New(1, 600_000_000_000, 3)}
	}
	for i := 0; i < fixWarmup+fixMeasured; i++ {
		phase := workload.PhaseMeasure
		if i < fixWarmup {
			phase = workload.PhaseWarmup
		}
		for _, op := range ops {
			count := int64(thr * c.mix[op] * (1 + 0.01*rng.NormFloat64()))
			// Service time grows as the server fills (M/M/1: s/(1-ρ)); the backlog of an
			// overloaded loop grows by (rate-capacity) per second: the operations due then
			// wait that long over their service time.
			service := o.serviceUs * 1e3 / (1 - rho)
			var backlog float64
			if o.rate > capacity {
				backlog = (o.rate/capacity - 1) * float64(i+1) * 1e9
			}
			svc := hdrhistogram.New(1, 600_000_000_000, 3)
			lat := hdrhistogram.New(1, 600_000_000_000, 3)
			per, rest := count/fixSamples, count%fixSamples
			for j := int64(0); j < fixSamples; j++ {
				n := per
				if j < rest {
					n++
				}
				s := service * math.Exp(0.35*rng.NormFloat64())
				_ = svc.RecordValues(int64(s), n)
				_ = lat.RecordValues(int64(s+backlog*rng.Float64()), n)
			}
			if phase == workload.PhaseMeasure {
				whole[op][0].Merge(lat)
				whole[op][1].Merge(svc)
			}
			for k, h := range []*hdrhistogram.Histogram{lat, svc} {
				res.Intervals = append(res.Intervals, workload.Interval{
					Start: time.Duration(i+1) * time.Second, End: time.Duration(i+2) * time.Second,
					Phase: phase, Op: op, Series: []string{LatencySeries, "service"}[k], Count: h.TotalCount(), Hist: encodeHist(h, false)})
			}
		}
	}
	for _, op := range ops {
		for k, w := range whole[op] {
			v := w.ValueAtPercentilesSlice([]float64{50, 90, 95, 99, 99.9})
			res.Ops = append(res.Ops, workload.OpSummary{Op: op, Series: []string{LatencySeries, "service"}[k], Count: w.TotalCount(),
				Throughput: float64(w.TotalCount()) / res.Measured.Seconds(),
				P50:        v[0], P90: v[1], P95: v[2], P99: v[3], P999: v[4], Max: w.Max(), Mean: w.Mean(),
				Hist: encodeHist(w, false)})
		}
	}
	return res
}

// sweepTelemetry samples the resources: the server's CPU follows its load up to one core
// (natively) or stays low while the proxy's CPU (other processes) fills the host.
func sweepTelemetry(c fixCell, rng *rand.Rand) []results.Point {
	o := c.open
	load := math.Min(o.rate/o.capacity, 1)
	var pts []results.Point
	add := func(t int, src, metric, label string, v float64) {
		pts = append(pts, results.Point{T: time.Duration(t) * time.Second, Source: src, Metric: metric, Label: label, Value: v})
	}
	noise := func(s float64) float64 { return math.Max(0, 1+s*rng.NormFloat64()) }
	for t := 1; t <= fixWarmup+fixMeasured+1; t++ {
		server, proxy := 0.97*load*noise(0.02), 0.0
		if o.proxy {
			server, proxy = 0.45*load*noise(0.02), 0.95*load*noise(0.02)
		}
		client := 0.35 * load * noise(0.03)
		softirq := 0.08 * load * noise(0.1)
		busy := math.Min(2, server+proxy+client+softirq+0.05)
		add(t, "db", "cpu_usage_seconds_per_second", "", server)
		add(t, "db", "cpu_periods_per_interval", "", 10)
		add(t, "db", "cpu_throttled_periods_per_interval", "", math.Round(10*math.Pow(server, 4)))
		add(t, "db", "disk_io_time_seconds_per_second", "vda", 0.02*noise(0.2))
		add(t, "client", "cpu_user_seconds_per_second", "", client*0.7)
		add(t, "client", "cpu_system_seconds_per_second", "", client*0.3)
		add(t, "host", "cpus", "", 2)
		add(t, "host", "cpu_idle_seconds_per_second", "", 2-busy)
		add(t, "host", "cpu_iowait_seconds_per_second", "", 0)
		add(t, "host", "cpu_softirq_seconds_per_second", "", softirq)
	}
	return pts
}
