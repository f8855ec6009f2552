package report

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"

	"github.com/boxbench/boxbench/report/format"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec/published"
	"github.com/boxbench/boxbench/stats"
	"github.com/boxbench/boxbench/study"
)

var publishedTmpl = sectionTemplate("published")

// publishedSection sets each effect of the spec's published: block (the study the experiment
// reproduces, package study) beside this host's estimate of the same comparison, with the
// verdict. It reads the block from the spec the results file stores, so a report of an old
// file shows it as that run's spec had it; a spec without the block shows nothing. Its model
// is the block and its rows, decoded and judged once when Build builds it.
type publishedSection struct {
	p    *study.Published // nil: the spec has no (valid) published: block
	rows []PublishedRow
}

// publishedBuilder computes the published section (its place: sectionBuilders, report/section.go).
var publishedBuilder builder = func(r *Report) (Section, error) { return newPublishedSection(r), nil }

// newPublishedSection decodes the block of r's spec and judges its effects on r's cells.
func newPublishedSection(r *Report) publishedSection {
	p := publishedOf(r.Spec)
	if p == nil {
		return publishedSection{}
	}
	return publishedSection{p, r.publishedRows(p)}
}

func (publishedSection) Head() Head {
	return Head{Anchor: "published", Title: "Published vs this host"}
}

// CSV offers the section's rows as "published-csv" (published_csv.go); none without a block.
func (s publishedSection) CSV() []CSVForm {
	if s.p == nil {
		return nil
	}
	return []CSVForm{{Name: CSVPublished, Write: func(w io.Writer) error { return writePublishedCSV(w, s.rows) }}}
}

// PublishedRow is one published effect against one compared cell of this experiment.
type PublishedRow struct {
	Effect string `json:"effect"`
	Claim  string `json:"claim"`
	// Cell and Baseline are the compared cells' ids; "" when no cell of the experiment matches.
	Cell     string `json:"cell"`
	Baseline string `json:"baseline"`
	// Published is the study's figure in words; PublishedPct its size (nil: only the
	// direction was published); Source where in the study it is.
	Published      string    `json:"published"`
	PublishedPct   *float64  `json:"published_overhead_pct"`
	PublishedRange []float64 `json:"published_range,omitempty"`
	Source         string    `json:"source"`
	// Estimate is this host's overhead of Cell over Baseline in percent of the baseline's
	// throughput (positive = slower) with its 95 % interval and the ok runs on each side; nil
	// when there is none.
	Estimate *PublishedEstimate `json:"estimate"`
	Verdict  study.Verdict      `json:"verdict"`
	Why      string             `json:"why"`
	// Forecast, for a "cannot tell" with an interval, is the runs per cell that would decide
	// it at this comparison's spread (study.ForecastFor); the why ends with it in words.
	Forecast *study.Forecast `json:"forecast,omitempty"`

	label, baseLabel string // the cells by their varying keys, for text and HTML
}

// PublishedEstimate is this host's figure for a row.
type PublishedEstimate struct {
	OverheadPct float64 `json:"overhead_pct"`
	Low         float64 `json:"ci_low_pct"`
	High        float64 `json:"ci_high_pct"`
	Valid       bool    `json:"ci_valid"`
	N           int     `json:"n"`
	BaselineN   int     `json:"baseline_n"`
}

// publishedOf decodes the spec's published: block; nil when there is none, or when the block
// breaks the study package's rules (a results file is untrusted input: an edited block with a
// control character must not reach the terminal).
func publishedOf(spec string) *study.Published {
	var doc struct {
		Published *study.Published `yaml:"published"`
	}
	root, ok := results.SpecTree(spec) // linear whatever the stored spec holds
	if !ok || root.Decode(&doc) != nil || doc.Published == nil || doc.Published.Validate() != nil {
		return nil
	}
	return doc.Published
}

// publishedRows are the rows of every effect, in the block's order, each effect's cells in
// display order.
func (r *Report) publishedRows(p *study.Published) []PublishedRow {
	var rows []PublishedRow
	params := make([]map[string]string, len(r.Cells))
	for i, c := range r.Cells {
		params[i] = c.Params
	}
	for _, e := range p.Effects {
		n := len(rows)
		for _, c := range r.Cells {
			if e.Selects(c.Params) {
				if row, ok := r.publishedRow(e, c); ok {
					rows = append(rows, row)
				}
			}
		}
		if len(rows) == n {
			row := newRow(e)
			row.Verdict, row.Why = study.CannotTell, "no compared cell of this experiment matches "+kvLabel(e.Cells, slices.Sorted(maps.Keys(e.Cells)), ", ")
			if why := e.Unmeasured(params); why != "" {
				row.Verdict, row.Why = study.NotMeasured, why // a cut of the study's matrix
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// publishedRow judges e on cell c against its baseline: the experiment's, or the cell with e's
// baseline keys replaced. ok is false for a cell that is its own baseline.
func (r *Report) publishedRow(e study.Effect, c *Cell) (PublishedRow, bool) {
	b := r.effectBaseline(e, c)
	if b == c {
		return PublishedRow{}, false
	}
	row := newRow(e)
	row.Cell, row.label = c.ID, label(c.Params, r.Varying)
	if b != nil {
		row.Baseline, row.baseLabel = b.ID, label(b.Params, r.Varying)
	}
	var est study.Estimate
	switch {
	case c.Skipped():
		row.Verdict, row.Why = study.CannotTell, "not run here: "+c.SkippedReason
		return row, true
	case b == nil && len(e.Baseline) > 0:
		row.Verdict, row.Why = study.NotMeasured, "its baseline, "+published.KV(e.BaselineParams(c.Params))+", is not in this matrix"
		return row, true
	case b == nil:
		row.Verdict, row.Why = study.CannotTell, "no baseline cell to compare with"
		return row, true
	case b.Skipped():
		row.Verdict, row.Why = study.CannotTell, "its baseline was not run here: "+b.SkippedReason
		return row, true
	case c.Emulated || b.Emulated:
		est.NotComparable = "an emulated VM (QEMU under TCG): its overhead is the emulator's, not a VM's"
	}
	o := c.Overhead
	if b.ID != c.BaselineID {
		if cmp, err := stats.Compare(b.Samples, c.Samples, stats.CompareOptions{HigherIsBetter: true}); err == nil {
			o = &cmp
		} else {
			o = nil
		}
	}
	if o != nil {
		ci := o.OverheadPctCI
		est.Overhead, est.Low, est.High, est.Valid = o.OverheadPct, ci.Lo, ci.Hi, ci.Valid
		row.Estimate = &PublishedEstimate{OverheadPct: o.OverheadPct, Low: ci.Lo, High: ci.Hi, Valid: ci.Valid, N: c.Runs, BaselineN: b.Runs}
		if nb, nc := o.Baseline.N, o.Candidate.N; o.MDEValid && nb+nc > 0 {
			est.MDE, est.N = o.MDEPct, 2*nb*nc/(nb+nc)
		}
	}
	row.Verdict, row.Why = study.Judge(e, est)
	if row.Verdict == study.CannotTell && est.Valid {
		if f, ok := study.ForecastFor(e, est); ok {
			row.Forecast = &f
			row.Why += "; " + f.Text()
		}
	}
	return row, true
}

// effectBaseline is the cell c is compared with for e; nil when there is none.
func (r *Report) effectBaseline(e study.Effect, c *Cell) *Cell {
	want := e.BaselineParams(c.Params)
	if want == nil {
		if c.IsBaseline() {
			return c
		}
		for _, b := range r.Cells {
			if c.BaselineID != "" && b.ID == c.BaselineID {
				return b
			}
		}
		return nil
	}
	for _, b := range r.Cells {
		if maps.Equal(b.Params, want) {
			return b
		}
	}
	return nil
}

func newRow(e study.Effect) PublishedRow {
	return PublishedRow{Effect: e.Name, Claim: e.Claim, Published: e.Figure(), PublishedPct: e.Overhead,
		PublishedRange: e.Range, Source: e.Source}
}

// estimateText is this host's figure: "+55.1 % [40.2, 70.3] (n 4 vs 4)".
func (row PublishedRow) estimateText() string {
	e := row.Estimate
	if e == nil {
		return "none"
	}
	ci := "no interval"
	if e.Valid {
		ci = fmt.Sprintf("[%s, %s]", format.Signed(e.Low), format.Signed(e.High))
	}
	return fmt.Sprintf("%s %% %s (n %d vs %d)", format.Signed(e.OverheadPct), ci, e.N, e.BaselineN)
}

func (s publishedSection) Text(w io.Writer) {
	if s.p == nil {
		return
	}
	fmt.Fprintln(w, "\npublished vs this host (overhead in % of the baseline's throughput, positive = slower; 95% interval):")
	format.Wrap(w, "  study: ", s.p.Study, 100)
	for _, row := range s.rows {
		fmt.Fprintf(w, "  %s", row.Effect)
		if row.label != "" {
			fmt.Fprintf(w, ": %s vs %s", row.label, format.OrDash(row.baseLabel))
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "    published  %s (%s)\n", row.Published, row.Source)
		fmt.Fprintf(w, "    this host  %s\n", row.estimateText())
		format.Wrap(w, "    verdict    ", string(row.Verdict)+": "+row.Why, 100)
	}
}

func (s publishedSection) JSON() (string, any) {
	if s.p == nil {
		return "", nil
	}
	return "published", struct {
		Study string         `json:"study"`
		Where string         `json:"where,omitempty"`
		Rows  []PublishedRow `json:"rows"`
	}{s.p.Study, s.p.Where, s.rows}
}

func (s publishedSection) HTML() (template.HTML, error) {
	if s.p == nil {
		return "", nil
	}
	type view struct {
		PublishedRow
		Label, BaseLabel, EstimateText string
	}
	var rows []view
	for _, row := range s.rows {
		rows = append(rows, view{row, row.label, row.baseLabel, row.estimateText()})
	}
	cut := false // a verdict the lede names only where a row has it, so older pages stay as they were
	for _, row := range s.rows {
		cut = cut || row.Verdict == study.NotMeasured
	}
	return renderHTML(publishedTmpl, struct {
		Study, Where string
		Rows         []view
		Cut          bool
	}{s.p.Study, s.p.Where, rows, cut})
}
