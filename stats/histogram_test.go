package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func encode(t *testing.T, h *hdrhistogram.Histogram) []byte {
	t.Helper()
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Three runs with different latency distributions: the merged histogram must
// equal one histogram that recorded every value, and its percentiles must be
// the exact percentiles of all values at 3-digit precision.
func TestMergeHistograms(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	all := hdrhistogram.New(1, 60_000_000_000, 3) // 1 ns .. 60 s, like boxbench
	var raw []int64
	var encoded [][]byte
	for run, median := range []float64{200_000, 250_000, 2_000_000} { // ns
		h := hdrhistogram.New(1, 60_000_000_000, 3)
		for i := 0; i < 5000+run*1000; i++ {
			v := int64(median * math.Exp(r.NormFloat64()*0.4))
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			if err := all.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			raw = append(raw, v)
		}
		encoded = append(encoded, encode(t, h))
	}
	merged, err := MergeHistograms(encoded)
	if err != nil {
		t.Fatal(err)
	}
	if !merged.Equals(all) {
		t.Fatalf("merged histogram differs from recording all values: total %d vs %d", merged.TotalCount(), all.TotalCount())
	}
	ps := []float64{99.9, 50, 99, 90} // unsorted on purpose: results keep this order
	got, err := Percentiles(merged, ps...)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(raw)
	for i, p := range ps {
		// Nearest-rank percentile; the epsilon keeps 99.9/100*18000 from
		// rounding up to the next rank.
		want := raw[int(math.Ceil(p/100*float64(len(raw))-1e-9))-1]
		if math.Abs(float64(got[i]-want)) > 1e-3*float64(want) {
			t.Errorf("p%v = %d, want %d within 0.1 %%", p, got[i], want)
		}
	}
}

// Histograms with different ranges and precision merge without dropping the
// values only the wider one can hold.
func TestMergeHistogramsDifferentGeometry(t *testing.T) {
	narrow := hdrhistogram.New(1, 1_000_000, 2)
	wide := hdrhistogram.New(1, 10_000_000_000, 3)
	for i := int64(1); i <= 1000; i++ {
		_ = narrow.RecordValue(i * 100)
	}
	if err := wide.RecordValue(5_000_000_000); err != nil {
		t.Fatal(err)
	}
	merged, err := MergeHistograms([][]byte{encode(t, narrow), encode(t, wide)})
	if err != nil {
		t.Fatal(err)
	}
	if merged.TotalCount() != 1001 {
		t.Errorf("total = %d, want 1001", merged.TotalCount())
	}
	if !merged.ValuesAreEquivalent(merged.Max(), 5_000_000_000) {
		t.Errorf("max = %d, want ≈ 5e9", merged.Max())
	}
}

func TestMergeHistogramsErrors(t *testing.T) {
	good := encode(t, hdrhistogram.New(1, 1000, 3))
	for _, tt := range []struct {
		name string
		in   [][]byte
	}{
		{"none", nil},
		{"not base64", [][]byte{good, []byte("%%%")}},
		{"garbage", [][]byte{[]byte("aGVsbG8gd29ybGQ=")}},
		{"truncated", [][]byte{good[:len(good)/2]}},
	} {
		if _, err := MergeHistograms(tt.in); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestPercentilesErrors(t *testing.T) {
	h := hdrhistogram.New(1, 1000, 3)
	if _, err := Percentiles(h, 50); err == nil {
		t.Error("empty histogram: no error")
	}
	if _, err := Percentiles(nil, 50); err == nil {
		t.Error("nil histogram: no error")
	}
	_ = h.RecordValue(10)
	for _, p := range []float64{-1, 100.1, math.NaN()} {
		if _, err := Percentiles(h, p); err == nil {
			t.Errorf("percentile %v: no error", p)
		}
	}
	got, err := Percentiles(h, 0, 100)
	if err != nil || !slices.Equal(got, []int64{10, 10}) {
		t.Errorf("Percentiles(0, 100) = %v, %v; want [10 10]", got, err)
	}
}
