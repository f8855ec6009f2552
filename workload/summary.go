package workload

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/stats"
)

// SummaryPercentiles are the percentiles an OpSummary carries, in field order (P50 … Max).
var SummaryPercentiles = []float64{50, 90, 95, 99, 99.9, 100}

// FillFromHistogram sets the percentiles, the maximum and the encoded histogram of s from h
// (values in ns). An empty histogram leaves the percentiles at zero but is still encoded.
func (s *OpSummary) FillFromHistogram(h *hdrhistogram.Histogram) error {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encode histogram: %w", err)
	}
	s.Hist = enc
	if h.TotalCount() == 0 {
		return nil
	}
	p, err := stats.Percentiles(h, SummaryPercentiles...)
	if err != nil {
		return err
	}
	s.P50, s.P90, s.P95, s.P99, s.P999, s.Max = p[0], p[1], p[2], p[3], p[4], p[5]
	return nil
}
