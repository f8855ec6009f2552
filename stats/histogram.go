package stats

import (
	"errors"
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// MergeHistograms decodes latency histograms written by hdrhistogram-go's
// Histogram.Encode(hdrhistogram.V2CompressedEncodingCookieBase) (base64 of
// the V2 compressed format) and returns one histogram holding all their
// recorded values. This is how latency percentiles across runs, workers or
// intervals are computed: percentiles of the merged distribution, never
// averages of per-run percentiles, which have no statistical meaning.
//
// The result covers the union of the inputs' trackable ranges at the finest
// of their precisions, so no value is dropped; histograms written with the
// same geometry (boxbench: ns, 3 significant digits) merge exactly. Inputs
// are not modified. It returns an error if encoded is empty, if any input
// fails to decode (naming its index), or if the merge would drop counts.
func MergeHistograms(encoded [][]byte) (*hdrhistogram.Histogram, error) {
	if len(encoded) == 0 {
		return nil, errors.New("merge histograms: no histograms")
	}
	hs := make([]*hdrhistogram.Histogram, len(encoded))
	lowest, highest, digits := int64(math.MaxInt64), int64(0), int64(0)
	for i, b := range encoded {
		h, err := hdrhistogram.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("merge histograms: decode histogram %d: %w", i, err)
		}
		hs[i] = h
		lowest = min(lowest, h.LowestTrackableValue())
		highest = max(highest, h.HighestTrackableValue())
		digits = max(digits, h.SignificantFigures())
	}
	merged, err := newHistogram(lowest, highest, digits)
	if err != nil {
		return nil, fmt.Errorf("merge histograms: %w", err)
	}
	for i, h := range hs {
		if dropped := merged.Merge(h); dropped != 0 {
			return nil, fmt.Errorf("merge histograms: histogram %d: %d values dropped (total count overflow)", i, dropped)
		}
	}
	return merged, nil
}

// newHistogram wraps hdrhistogram.New, which panics on a geometry it cannot
// represent; decoded inputs are validated by Decode, so this is defensive.
func newHistogram(lowest, highest, digits int64) (h *hdrhistogram.Histogram, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("histogram geometry lowest=%d highest=%d digits=%d: %v", lowest, highest, digits, r)
		}
	}()
	return hdrhistogram.New(lowest, highest, int(digits)), nil
}

// Percentiles returns the values at the given percentiles (0–100, e.g.
// 50, 99, 99.9) of h, in the order asked, in h's unit (ns for boxbench).
// Each value is the highest value equivalent, at h's precision, to the
// recorded value at that rank (HdrHistogram's convention; the 0th
// percentile is the lowest equivalent value). It returns an error for an
// empty histogram, whose percentiles do not exist, and for a percentile
// outside [0, 100] or NaN.
func Percentiles(h *hdrhistogram.Histogram, ps ...float64) ([]int64, error) {
	if h == nil || h.TotalCount() == 0 {
		return nil, errors.New("percentiles: empty histogram")
	}
	for _, p := range ps {
		if !(p >= 0 && p <= 100) {
			return nil, fmt.Errorf("percentiles: %v outside [0, 100]", p)
		}
	}
	return h.ValueAtPercentilesSlice(ps), nil
}
