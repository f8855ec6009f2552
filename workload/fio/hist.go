package fio

import (
	"fmt"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry of every latency histogram boxbench stores (as in workload/ycsb and
// workload/sysbench): nanoseconds, 3 significant digits, up to 10 minutes. A longer value is
// recorded as 10 minutes and counted in the "clamped_values_total" metric.
const (
	histLowest  = 1
	histHighest = int64(10 * 60 * 1e9)
	histDigits  = 3
)

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
