package sysbench

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry of every latency histogram boxbench stores (the same as workload/ycsb):
// nanoseconds, 3 significant digits, up to 10 minutes. A longer value is recorded as 10
// minutes and counted in the "clamped_values_total" metric.
const (
	histLowest  = 1
	histHighest = int64(10 * 60 * 1e9)
	histDigits  = 3
)

// bucketsToHDR records each sysbench histogram bucket's count at the bucket's value, in ns.
// sysbench's buckets are logarithmic, about 1.8 % wide, and their values are printed with
// three decimals of a millisecond, so a recorded value is within ~0.9 % (and 0.5 µs) of the
// latencies it stands for. It returns the number of values clamped to histHighest.
func bucketsToHDR(bs []Bucket) (*hdrhistogram.Histogram, int64, error) {
	h := hdrhistogram.New(histLowest, histHighest, histDigits)
	var clamped int64
	for _, b := range bs {
		if b.Count <= 0 {
			continue
		}
		ns := int64(math.Round(b.ValueMS * 1e6))
		switch {
		case ns < histLowest:
			ns = histLowest
		case ns > histHighest:
			ns, clamped = histHighest, clamped+b.Count
		}
		if err := h.RecordValues(ns, b.Count); err != nil {
			return nil, 0, fmt.Errorf("record %d ns ×%d: %w", ns, b.Count, err)
		}
	}
	return h, clamped, nil
}
