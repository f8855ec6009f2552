package results

import (
	"errors"
	"math"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestCut(t *testing.T) {
	if got := cut("short", 10); got != "short" {
		t.Errorf("cut changed a short string: %q", got)
	}
	long := strings.Repeat("µ", 100) // two bytes each: a cut must not split one
	got := cut(long, 11)
	if !strings.HasPrefix(got, strings.Repeat("µ", 5)+"…") || !strings.Contains(got, "200 bytes, at most 11 kept") {
		t.Errorf("cut = %q", got)
	}
}

func TestCheckFigure(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e308, -1e16, -3} {
		err := checkFigure("run r#1", "ops_per_second", v)
		if err == nil || !errors.Is(err, ErrBounds) || !strings.Contains(err.Error(), "run r#1: ops_per_second is ") {
			t.Errorf("%g: %v", v, err)
		}
	}
	for _, v := range []float64{0, 51830.4, MaxFigure} {
		if err := checkFigure("r", "f", v); err != nil {
			t.Errorf("%g refused: %v", v, err)
		}
	}
	if err := checkResultJSON("r", []byte(`{"ops":[{"ops_per_second":1e308}]}`)); err == nil || !strings.Contains(err.Error(), "1e308") {
		t.Errorf("a result holding 1e308: %v", err)
	}
	if err := checkResultJSON("r", []byte(`{"x":"`+strings.Repeat("a", MaxResultBytes)+`"}`)); err == nil || !strings.Contains(err.Error(), "bytes long") {
		t.Errorf("a result over the bound: %v", err)
	}
	if err := checkResultJSON("r", []byte(`{"mode":"closed","threads":4,"metrics":{"x":12.5}}`)); err != nil {
		t.Errorf("an ordinary result: %v", err)
	}
}

// TestHistOK: boxbench's geometry is read; one whose counts array would be huge (5 digits up
// to 2^62: tens of MiB a decode) or a header that is not one is not.
func TestHistOK(t *testing.T) {
	enc := func(h *hdrhistogram.Histogram) []byte {
		_ = h.RecordValue(1000)
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !histOK(enc(hdrhistogram.New(1, 600e9, 3))) {
		t.Error("boxbench's own histogram refused")
	}
	if histOK(enc(hdrhistogram.New(1, 1<<62, 5))) {
		t.Error("a histogram of 5 digits up to 2^62 accepted")
	}
	for _, b := range []string{"", "AAAA", "not base64!", strings.Repeat("A", 2<<20)} {
		if histOK([]byte(b)) {
			t.Errorf("%.20q accepted", b)
		}
	}
}
