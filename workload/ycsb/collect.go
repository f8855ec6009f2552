package ycsb

import (
	"fmt"
	"runtime"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/stats"
	"github.com/boxbench/boxbench/workload"
)

// collector turns the workers' recorders into stored intervals and the measured window's
// summaries. It runs on one goroutine.
type collector struct {
	recs   []*recorder
	open   bool
	inMix  [numOps]bool
	acc    [numOps][numSeries][2]*hdrhistogram.Histogram // this interval, all workers
	total  [numOps][numSeries][2]*hdrhistogram.Histogram // the measured window
	errs   [numKinds]int64                               // the measured window
	clamp  int64
	ivs    []workload.Interval
	start  time.Duration // start of the current interval, from Clock.Start
	encErr error
}

func newCollector(recs []*recorder, open bool, props [numOps]float64, start time.Duration) *collector {
	c := &collector{recs: recs, open: open, start: start}
	for o, p := range props {
		c.inMix[o] = p > 0
	}
	for o := range c.acc {
		for s := range c.acc[o] {
			for e := range c.acc[o][s] {
				c.acc[o][s][e], c.total[o][s][e] = newHist(), newHist()
			}
		}
	}
	return c
}

// tick closes the interval ending at end (offset from Clock.Start): it takes every worker's
// histograms, stores one interval per operation and series, and adds measured ones to the
// totals.
func (c *collector) tick(end time.Duration, phase workload.Phase) {
	var errs [numKinds]int64
	for _, r := range c.recs {
		s := r.swap()
		for o := range s.h {
			for se := range s.h[o] {
				for e, h := range s.h[o][se] {
					if h != nil && h.TotalCount() > 0 {
						c.acc[o][se][e].Merge(h)
					}
				}
			}
		}
		for k, n := range s.errs {
			errs[k] += n
		}
		c.clamp += s.clamped
		r.release(s)
		// Merging and encoding histograms takes milliseconds a tick; on a run with few Ps
		// (Config.ClientProcs) yield between the pieces, so that a worker whose reply has
		// arrived waits for one piece at most, not for the whole tick.
		runtime.Gosched()
	}
	if phase == workload.PhaseMeasure {
		for k, n := range errs {
			c.errs[k] += n
		}
	}
	for o := opType(0); o < numOps; o++ {
		ok, bad := c.acc[o][serLatency][0], c.acc[o][serLatency][1]
		if !c.inMix[o] && ok.TotalCount() == 0 && bad.TotalCount() == 0 {
			continue
		}
		var latEnc [2][]byte
		for se := 0; se < numSeries; se++ {
			src := se
			if !c.open {
				src = serLatency // closed loop: service time is the latency
			}
			for e := 0; e < 2; e++ {
				h := c.acc[o][src][e]
				if e == 1 && h.TotalCount() == 0 {
					continue
				}
				var enc []byte
				if se == serService && !c.open {
					enc = latEnc[e]
				} else {
					enc = c.encode(h)
				}
				if se == serLatency {
					latEnc[e] = enc
				}
				iv := workload.Interval{Start: c.start, End: end, Phase: phase, Op: o.String(),
					Series: seriesNames[se], Count: ok.TotalCount(), Errors: bad.TotalCount(), Hist: enc}
				if e == 1 {
					iv.Series += "_error"
					iv.Count = 0
				}
				c.ivs = append(c.ivs, iv)
			}
		}
		for se := 0; se < numSeries; se++ {
			for e := 0; e < 2; e++ {
				h := c.acc[o][se][e]
				if phase == workload.PhaseMeasure && h.TotalCount() > 0 {
					c.total[o][se][e].Merge(h)
				}
				h.Reset()
			}
		}
		runtime.Gosched()
	}
	c.start = end
}

func (c *collector) encode(h *hdrhistogram.Histogram) []byte {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil && c.encErr == nil {
		c.encErr = fmt.Errorf("encode histogram: %w", err)
	}
	return b
}

// summaries returns one OpSummary per operation of the mix (or that ran) and series over the
// measured window of length measured.
func (c *collector) summaries(measured time.Duration) []workload.OpSummary {
	var out []workload.OpSummary
	for o := opType(0); o < numOps; o++ {
		src := [numSeries]int{serLatency, serService}
		if !c.open {
			src[serService] = serLatency
		}
		ok, bad := c.total[o][serLatency][0], c.total[o][serLatency][1]
		if !c.inMix[o] && ok.TotalCount() == 0 && bad.TotalCount() == 0 {
			continue
		}
		for se := 0; se < numSeries; se++ {
			h := c.total[o][src[se]][0]
			s := workload.OpSummary{Op: o.String(), Series: seriesNames[se], Count: h.TotalCount(),
				Errors: bad.TotalCount(), Hist: c.encode(h)}
			if measured > 0 {
				s.Throughput = float64(s.Count) / measured.Seconds()
			}
			if p, err := stats.Percentiles(h, 50, 90, 95, 99, 99.9, 100); err == nil {
				s.P50, s.P90, s.P95, s.P99, s.P999, s.Max = p[0], p[1], p[2], p[3], p[4], p[5]
				s.Mean = h.Mean()
			}
			out = append(out, s)
		}
	}
	return out
}

// errorCounts returns the measured window's errors by kind.
func (c *collector) errorCounts() map[string]int64 {
	m := map[string]int64{}
	for k, n := range c.errs {
		if n > 0 {
			m[kindNames[k]] = n
		}
	}
	return m
}
