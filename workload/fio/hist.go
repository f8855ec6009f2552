package fio

import (
	"fmt"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/stats"
	"github.com/boxbench/boxbench/workload"
)

// Histogram geometry of every latency histogram boxbench stores (as in workload/ycsb and
// workload/sysbench): nanoseconds, 3 significant digits, up to 10 minutes. A longer value is
// recorded as 10 minutes and counted in the "clamped_values_total" metric.
const (
	histLowest  = 1
	histHighest = int64(10 * 60 * 1e9)
	histDigits  = 3
)

// fillFromHDR sets the percentiles, the maximum and the encoded histogram of s from h.
func fillFromHDR(s *workload.OpSummary, h *hdrhistogram.Histogram) error {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encode histogram: %w", err)
	}
	s.Hist = enc
	if h.TotalCount() == 0 {
		return nil
	}
	p, err := stats.Percentiles(h, 50, 90, 95, 99, 99.9, 100)
	if err != nil {
		return err
	}
	s.P50, s.P90, s.P95, s.P99, s.P999, s.Max = p[0], p[1], p[2], p[3], p[4], p[5]
	return nil
}

// addBins records fio json+ bins (value in ns as a decimal string → count) into h. It returns
// the number of values clamped to histHighest.
func addBins(h *hdrhistogram.Histogram, bins map[string]int64) (int64, error) {
	var clamped int64
	for k, n := range bins {
		v, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("json+ bin %q: %w", k, err)
		}
		if n <= 0 {
			continue
		}
		switch {
		case v < histLowest:
			v = histLowest
		case v > histHighest:
			v, clamped = histHighest, clamped+n
		}
		if err := h.RecordValues(v, n); err != nil {
			return 0, fmt.Errorf("record %d ns ×%d: %w", v, n, err)
		}
	}
	return clamped, nil
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histLowest, histHighest, histDigits) }
