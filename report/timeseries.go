package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/results"
)

// runSeries is what one run's time-series panels show, x in seconds on the run's clock.
type runSeries struct {
	warmupEnd  float64 // end of the warm-up (s); 0 when none is marked
	throughput []xy    // ops/s per interval, every op type of the latency series
	p99        map[string][]xy
	cpu        []named // cores
	throttled  []xy    // % of CFS periods throttled
	disk       []named // MiB/s
}

type named struct {
	name, color string
	pts         []xy
}

var opColors = map[string]string{"read": "#0072b2", "update": "#d55e00", "insert": "#009e73", "scan": "#cc79a7", "rmw": "#e69f00"}

func opColor(op string, i int) string {
	if c, ok := opColors[op]; ok {
		return c
	}
	return palette[i%len(palette)]
}

// loadRunSeries reads a run's intervals and telemetry.
func loadRunSeries(store *results.Store, runID string) (*runSeries, error) {
	ivs, err := store.Intervals(runID)
	if err != nil {
		return nil, fmt.Errorf("intervals of %s: %w", runID, err)
	}
	pts, err := store.Series(runID)
	if err != nil {
		return nil, fmt.Errorf("telemetry of %s: %w", runID, err)
	}
	s := &runSeries{p99: map[string][]xy{}}
	s.fromIntervals(ivs)
	s.fromTelemetry(pts)
	return s, nil
}

// maxP99Points bounds the p99 points of one op in a run's panel.
const maxP99Points = 300

func (s *runSeries) fromIntervals(ivs []results.IntervalRow) {
	type slot struct {
		start, end time.Duration
		count      int64
	}
	var slots []slot
	// Each decoded histogram allocates its whole geometry (a few hundred KiB): at most
	// maxP99Points per op are decoded, evenly spaced, whatever the number of intervals.
	perOp := map[string]int{}
	for _, iv := range ivs {
		if iv.Series == LatencySeries && iv.Count > 0 && len(iv.Hist) > 0 {
			perOp[iv.Op]++
		}
	}
	seen := map[string]int{}
	for _, iv := range ivs {
		if iv.Series != LatencySeries {
			continue
		}
		if iv.Phase == "warmup" {
			s.warmupEnd = math.Max(s.warmupEnd, iv.End.Seconds())
		}
		if n := len(slots); n > 0 && slots[n-1].start == iv.Start && slots[n-1].end == iv.End {
			slots[n-1].count += iv.Count
		} else {
			slots = append(slots, slot{iv.Start, iv.End, iv.Count})
		}
		if iv.Count == 0 || len(iv.Hist) == 0 {
			continue
		}
		k := seen[iv.Op]
		seen[iv.Op]++
		if stride := (perOp[iv.Op] + maxP99Points - 1) / maxP99Points; k%stride != 0 {
			continue
		}
		h, err := hdrhistogram.Decode(iv.Hist)
		if err != nil || h.TotalCount() == 0 {
			continue
		}
		s.p99[iv.Op] = append(s.p99[iv.Op], xy{iv.End.Seconds(), micros(h.ValueAtPercentile(99))})
	}
	for _, sl := range slots {
		if d := (sl.end - sl.start).Seconds(); d > 0 {
			s.throughput = append(s.throughput, xy{sl.end.Seconds(), float64(sl.count) / d})
		}
	}
}

// fromTelemetry picks the resource metrics the panels show. Per-device metrics (Label set) are
// summed over devices.
func (s *runSeries) fromTelemetry(pts []results.Point) {
	by := map[string]map[time.Duration]float64{}
	for _, p := range pts {
		k := p.Source + "/" + p.Metric
		if by[k] == nil {
			by[k] = map[time.Duration]float64{}
		}
		by[k][p.T] += p.Value
	}
	series := func(k string) []xy {
		m := by[k]
		ts := make([]time.Duration, 0, len(m))
		for t := range m {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		out := make([]xy, 0, len(ts))
		for _, t := range ts {
			out = append(out, xy{t.Seconds(), m[t]})
		}
		return out
	}
	sum := func(a, b []xy) []xy {
		bm := map[float64]float64{}
		for _, p := range b {
			bm[p.X] = p.Y
		}
		var out []xy
		for _, p := range a {
			if v, ok := bm[p.X]; ok {
				out = append(out, xy{p.X, p.Y + v})
			}
		}
		return out
	}
	add := func(into *[]named, name, color string, pts []xy) {
		if len(pts) > 0 {
			*into = append(*into, named{name, color, pts})
		}
	}
	add(&s.cpu, "database", "#0072b2", series("db/cpu_usage_seconds_per_second"))
	add(&s.cpu, "client", "#e69f00", sum(series("client/cpu_user_seconds_per_second"), series("client/cpu_system_seconds_per_second")))
	add(&s.cpu, "host softirq", "#cc79a7", series("host/cpu_softirq_seconds_per_second"))

	periods := by["db/cpu_periods_per_interval"]
	var any bool
	for _, v := range periods {
		any = any || v > 0
	}
	if any {
		for _, p := range series("db/cpu_throttled_periods_per_interval") {
			if n := periods[time.Duration(math.Round(p.X*1e9))]; n > 0 {
				s.throttled = append(s.throttled, xy{p.X, 100 * p.Y / n})
			}
		}
	}

	mib := func(pts []xy) []xy {
		for i := range pts {
			pts[i].Y /= 1 << 20
		}
		return pts
	}
	read, write := series("db/io_read_bytes_per_second"), series("db/io_write_bytes_per_second")
	if len(read)+len(write) == 0 { // cgroup I/O accounting absent: the data directory's device
		read, write = series("db/disk_read_bytes_per_second"), series("db/disk_write_bytes_per_second")
	}
	add(&s.disk, "write", "#009e73", mib(write))
	add(&s.disk, "read", "#56b4e9", mib(read))
}

// panelSpec is one column of a cell's run grid.
type panelSpec struct {
	title string
	unit  string
	get   func(*runSeries) []named
}

func panelSpecs(ops []string) []panelSpec {
	return []panelSpec{
		{title: "throughput", unit: "ops/s", get: func(s *runSeries) []named {
			return nonEmpty(named{"throughput", "#0072b2", s.throughput})
		}},
		{title: "p99 latency", unit: "µs", get: func(s *runSeries) []named {
			var out []named
			for i, op := range ops {
				out = append(out, nonEmpty(named{op, opColor(op, i), s.p99[op]})...)
			}
			return out
		}},
		{title: "CPU", unit: "cores", get: func(s *runSeries) []named { return s.cpu }},
		{title: "CPU throttled", unit: "% of periods", get: func(s *runSeries) []named {
			return nonEmpty(named{"throttled", "#d55e00", s.throttled})
		}},
		{title: "disk I/O", unit: "MiB/s", get: func(s *runSeries) []named { return s.disk }},
	}
}

func nonEmpty(n named) []named {
	if len(n.pts) == 0 {
		return nil
	}
	return []named{n}
}

// panelChart draws one small panel; x and y ranges are shared by the cell's runs.
func panelChart(name string, lines []named, xmax, ymax, warmupEnd float64) string {
	p := newPlot(name, "panel", 224, 118, 40, 6, 6, 18)
	xlo, xhi, xt := linearTicks(0, xmax, 4, func(v float64) string { return trimZeros(fmt.Sprintf("%g", v)) })
	xt[len(xt)-1].Label += " s"
	p.setX(xlo, xhi, false)
	ylo, yhi, yt := linearTicks(0, ymax, 3, shortNum)
	p.setY(ylo, yhi, false)
	if warmupEnd > 0 {
		p.band(0, warmupEnd, "warm-up")
	}
	p.axes(xt, yt)
	for _, l := range lines {
		p.line(l.pts, l.color, "tline", l.name)
	}
	return p.svg(name)
}

// compact formats a count with three significant digits and a suffix: 2457624 → "2.46M".
func compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimZeros(fmt.Sprintf("%.3g", v/1e9)) + "G"
	case a >= 1e6:
		return trimZeros(fmt.Sprintf("%.3g", v/1e6)) + "M"
	case a >= 1e4:
		return trimZeros(fmt.Sprintf("%.3g", v/1e3)) + "k"
	}
	return format.Group(v)
}

// shortNum labels axis ticks compactly: 45000 → "45k", 1.5e6 → "1.5M", 0.25 → "0.25".
func shortNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimZeros(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e4:
		return trimZeros(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 100 || a == 0:
		return trimZeros(fmt.Sprintf("%.0f", v))
	}
	return trimZeros(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"))
}
