package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

// The JSON shape (`boxbench report --format json`). Field names and units are part of the CLI's
// contract; docs/results.md describes them.
type jsonReport struct {
	Experiment  Experiment        `json:"experiment"`
	Environment map[string]string `json:"environment"`
	Keys        []string          `json:"keys"`
	Cells       []jsonCell        `json:"cells"`
	Skipped     []jsonSkipped     `json:"skipped"`
	Warnings    []Warning         `json:"warnings"`
	// Events: resumes, data loads and adaptive repetition decisions, in order.
	// (Their times are in the results file; the report stays reproducible without them.)
	Events []jsonEvent `json:"events,omitempty"`
	// The sections' keys follow (Report.Sections, report/section.go): sweeps, calibration.
}

type jsonEvent struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

type jsonCell struct {
	ID         string                 `json:"id"`
	Params     map[string]string      `json:"params"`
	Runs       int                    `json:"runs"`
	Emulated   bool                   `json:"emulated,omitempty"` // a VM under QEMU's TCG: the emulator's numbers
	Throughput *jsonThroughput        `json:"throughput"`
	Overhead   *jsonOverhead          `json:"overhead,omitempty"`
	Latency    map[string]jsonLatency `json:"latency"`
	Warnings   []Warning              `json:"warnings"`
	// Metrics are workload-specific figures (unit in the name) and, beside a neighbour, the
	// configured and obtained shares: {name: {mean, ci95, n}}.
	Metrics map[string]jsonMetric `json:"metrics,omitempty"`
}

type jsonThroughput struct {
	Mean   float64     `json:"mean"`
	Median float64     `json:"median"`
	SD     float64     `json:"sd"`
	CoV    float64     `json:"cov"`
	CI95   *[2]float64 `json:"ci95"`
	Unit   string      `json:"unit"`
}

type jsonOverhead struct {
	Baseline string      `json:"baseline"`
	Ratio    float64     `json:"ratio"`
	CI95     *[2]float64 `json:"ci95"`
	PValue   float64     `json:"p_value"`
	Verdict  string      `json:"verdict"`
	// MDEPct is the smallest overhead (percent of the baseline) these runs could have detected
	// (α = 0.05, 80 % power); absent with fewer than 2 runs in a cell.
	MDEPct *float64 `json:"mde_pct,omitempty"`
	// Paired is the comparison by rounds (ratio, CI, its own mde_pct, per-round ratios).
	Paired *stats.Paired `json:"paired,omitempty"`
}

type jsonLatency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Unit string  `json:"unit"`
}

type jsonSkipped struct {
	ID     string            `json:"id"`
	Params map[string]string `json:"params"`
	Reason string            `json:"reason"`
}

// WriteJSON writes the report as one indented JSON document. Per runnable cell: id, params,
// runs (ok runs), throughput (ops/s; null without ok runs), overhead versus the baseline
// (absent for a baseline and when there is no comparison: the warnings say why), latency per
// op type (µs, merged histograms) and warnings; ci95 is null where no interval exists.
func WriteJSON(w io.Writer, r *Report) error {
	sections, err := r.sections()
	if err != nil {
		return err
	}
	out := jsonReport{Experiment: r.Experiment, Environment: r.Env, Keys: format.NonNil(r.Keys),
		Cells: []jsonCell{}, Skipped: []jsonSkipped{}, Warnings: format.NonNil(r.Warnings)}
	for _, e := range r.Events {
		out.Events = append(out.Events, jsonEvent{Kind: e.Kind, Message: e.Message})
	}
	for _, c := range r.Cells {
		if c.Skipped() {
			out.Skipped = append(out.Skipped, jsonSkipped{ID: c.ID, Params: c.Params, Reason: c.SkippedReason})
			continue
		}
		jc := jsonCell{ID: c.ID, Params: c.Params, Runs: c.Runs, Emulated: c.Emulated, Latency: map[string]jsonLatency{},
			Warnings: format.NonNil(c.Warnings), Metrics: metricsJSON(c.Metrics)}
		if c.Runs > 0 {
			t := c.Throughput
			jc.Throughput = &jsonThroughput{Mean: t.Mean, Median: t.Median, SD: t.SD, CoV: t.CoV,
				CI95: format.Interval(t.CI95), Unit: "ops/s"}
		}
		if o := c.Overhead; o != nil {
			jc.Overhead = &jsonOverhead{Baseline: c.BaselineID, Ratio: o.Ratio, CI95: format.Interval(o.RatioCI),
				PValue: o.UTest.P, Verdict: string(o.Verdict), Paired: c.Paired}
			if o.MDEValid {
				mde := o.MDEPct
				jc.Overhead.MDEPct = &mde
			}
		}
		for _, l := range c.Latency {
			if l.Count > 0 {
				jc.Latency[l.Op] = jsonLatency{P50: l.P50, P95: l.P95, P99: l.P99, P999: l.P999, Unit: "us"}
			}
		}
		out.Cells = append(out.Cells, jc)
	}
	if out.Environment == nil {
		out.Environment = map[string]string{}
	}
	var doc bytes.Buffer
	enc := json.NewEncoder(&doc)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return JSONError(err)
	}
	b, err := appendSectionsJSON(doc.Bytes(), sections)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// JSONError is err, or for a figure JSON cannot hold (NaN, ±Inf: encoding/json refuses them)
// an error that says so and what it means: a value of the results file beyond its bounds
// reached a figure the bounds of package results do not cover. The JSON writers return it.
func JSONError(err error) error {
	var uv *json.UnsupportedValueError
	if errors.As(err, &uv) {
		return fmt.Errorf("json: a figure of the report is %s, which JSON cannot hold: the results file holds a value beyond what it may (%w; docs/results.md)", uv.Str, results.ErrBounds)
	}
	return err
}
