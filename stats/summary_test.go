package stats

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestSummarizeEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one run", []float64{7}, Summary{N: 1, Mean: 7, Median: 7, Min: 7, Max: 7}},
		{
			"zero variance",
			[]float64{5, 5, 5},
			Summary{N: 3, Mean: 5, Median: 5, Min: 5, Max: 5, CI95: Interval{Lo: 5, Hi: 5, Valid: true}},
		},
		{
			"zero mean has CoV 0",
			[]float64{-1, 1},
			Summary{N: 2, Mean: 0, Median: 0, SD: math.Sqrt2, Min: -1, Max: 1,
				CI95: Interval{Lo: -12.706204736174698, Hi: 12.706204736174698, Valid: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.xs)
			if !summaryNear(got, tt.want) {
				t.Errorf("Summarize(%v) =\n %+v\nwant\n %+v", tt.xs, got, tt.want)
			}
			// Every summary must encode: encoding/json rejects NaN and Inf.
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("json.Marshal: %v", err)
			}
		})
	}
}

func summaryNear(a, b Summary) bool {
	f := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) }
	return a.N == b.N && f(a.Mean, b.Mean) && f(a.Median, b.Median) && f(a.SD, b.SD) &&
		f(a.CoV, b.CoV) && f(a.Min, b.Min) && f(a.Max, b.Max) &&
		a.CI95.Valid == b.CI95.Valid && f(a.CI95.Lo, b.CI95.Lo) && f(a.CI95.Hi, b.CI95.Hi)
}

func TestSummarizeDoesNotModifyInput(t *testing.T) {
	xs := []float64{3, 1, 2}
	Summarize(xs)
	if !slices.Equal(xs, []float64{3, 1, 2}) {
		t.Errorf("input reordered to %v", xs)
	}
}

func TestSummarizeLargeOffset(t *testing.T) {
	// A naive one-pass variance loses every digit here.
	xs := []float64{1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16}
	if got := Summarize(xs).SD; math.Abs(got-math.Sqrt(30)) > 1e-6 {
		t.Errorf("SD = %v, want %v", got, math.Sqrt(30))
	}
}

func TestIntervalHelpers(t *testing.T) {
	iv := Interval{Lo: 1, Hi: 3, Valid: true}
	if !iv.Contains(1) || !iv.Contains(3) || iv.Contains(3.5) {
		t.Errorf("Contains wrong for %+v", iv)
	}
	if iv.HalfWidth() != 1 {
		t.Errorf("HalfWidth = %v, want 1", iv.HalfWidth())
	}
	var invalid Interval
	if invalid.Contains(0) {
		t.Error("invalid interval contains 0")
	}
	if !math.IsInf(invalid.HalfWidth(), 1) {
		t.Errorf("invalid HalfWidth = %v, want +Inf", invalid.HalfWidth())
	}
}

func TestNeedMore(t *testing.T) {
	rule := AdaptiveRule{Min: 3, Max: 6, TargetCIHalfWidth: 0.02}
	tight := []float64{1000, 1002, 998, 1001} // half-width ≈ 0.27 %
	wide := []float64{1000, 1100, 900, 1050}  // half-width ≈ 14 %
	tests := []struct {
		name    string
		samples []float64
		rule    AdaptiveRule
		want    bool
		reason  string // substring of the reason
	}{
		{"no runs", nil, rule, true, "n=0 < min=3"},
		{"one run", []float64{1000}, rule, true, "< min"},
		{"below min even if tight", tight[:2], rule, true, "< min"},
		{"tight at min", tight[:3], rule, false, "<= target 2.00%"},
		{"tight", tight, rule, false, "<= target"},
		{"wide below max", wide, rule, true, "> target"},
		{"wide at max", append(wide, 1000, 1020), rule, false, "reached max=6"},
		{"wide beyond max", append(wide, 1000, 1020, 990), rule, false, "reached max"},
		{"zero variance", []float64{7, 7, 7}, rule, false, "0.00%"},
		{"zero mean runs to max", []float64{-1, 1, 0}, rule, true, "no CI"},
		{"zero mean at max", []float64{-1, 1, 0, 0, 0, 0}, rule, false, "reached max"},
		// Rules that fail Validate still terminate.
		{"min above max: min wins", tight[:3], AdaptiveRule{Min: 5, Max: 2, TargetCIHalfWidth: 0.02}, true, "< min"},
		{"min above max: stops at min", wide[:3], AdaptiveRule{Min: 3, Max: 2, TargetCIHalfWidth: 0.02}, false, "reached max"},
		{"zero rule", nil, AdaptiveRule{}, false, "reached max=0"},
		{"zero target runs to max", tight, AdaptiveRule{Min: 2, Max: 5, TargetCIHalfWidth: 0}, true, "> target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := NeedMore(tt.samples, tt.rule)
			if got != tt.want || !strings.Contains(reason, tt.reason) {
				t.Errorf("NeedMore(%v) = %t, %q; want %t, reason containing %q", tt.samples, got, reason, tt.want, tt.reason)
			}
		})
	}
}

// A caller looping on NeedMore stops between Min and Max runs.
func TestNeedMoreTerminates(t *testing.T) {
	rule := AdaptiveRule{Min: 3, Max: 10, TargetCIHalfWidth: 0.001}
	var runs []float64
	for i := 0; ; i++ {
		more, _ := NeedMore(runs, rule)
		if !more {
			break
		}
		if i > 100 {
			t.Fatal("NeedMore never stopped")
		}
		runs = append(runs, float64(900+(i%2)*200)) // alternating: never tight
	}
	if len(runs) != rule.Max {
		t.Errorf("stopped after %d runs, want max %d", len(runs), rule.Max)
	}
}

func TestAdaptiveRuleValidate(t *testing.T) {
	tests := []struct {
		rule  AdaptiveRule
		nerrs int // number of problems reported
	}{
		{AdaptiveRule{Min: 3, Max: 10, TargetCIHalfWidth: 0.02}, 0},
		{AdaptiveRule{Min: 2, Max: 2, TargetCIHalfWidth: 0.5}, 0},
		{AdaptiveRule{Min: 1, Max: 10, TargetCIHalfWidth: 0.02}, 1},
		{AdaptiveRule{Min: 5, Max: 3, TargetCIHalfWidth: 0.02}, 1},
		{AdaptiveRule{Min: 3, Max: 10, TargetCIHalfWidth: 0}, 1},
		{AdaptiveRule{}, 2}, // min < 2 and target 0; max == min is fine
		{AdaptiveRule{Min: 0, Max: -1, TargetCIHalfWidth: -1}, 3},
	}
	for _, tt := range tests {
		err := tt.rule.Validate()
		got := 0
		if err != nil {
			got = len(strings.Split(err.Error(), "\n"))
		}
		if got != tt.nerrs {
			t.Errorf("%+v: %d problems (%v), want %d", tt.rule, got, err, tt.nerrs)
		}
	}
}
