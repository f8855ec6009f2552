package compare

import (
	"encoding/json"
	"io"
	"math"

	"github.com/boxbench/boxbench/report"
	"github.com/boxbench/boxbench/report/format"
)

// comparisonJSON is the JSON shape of a comparison.
type comparisonJSON struct {
	Base          report.Experiment `json:"base"`
	Next          report.Experiment `json:"next"`
	MaxRegression float64           `json:"max_regression"`
	Regressed     bool              `json:"regressed"`
	Cells         []cellChangeJSON  `json:"cells"`
	OnlyBase      []string          `json:"only_base"`
	OnlyNext      []string          `json:"only_next"`
	Env           []EnvChange       `json:"environment_changes"`
	SpecChanged   bool              `json:"spec_changed"`
}

type cellChangeJSON struct {
	ID        string                        `json:"id"`
	Params    map[string]string             `json:"params"`
	Runs      [2]int                        `json:"runs"` // base, next
	Base      *float64                      `json:"base_mean,omitempty"`
	Next      *float64                      `json:"next_mean,omitempty"`
	Ratio     *float64                      `json:"ratio,omitempty"`
	CI95      *[2]float64                   `json:"ci95"`
	PValue    *float64                      `json:"p_value,omitempty"`
	Verdict   string                        `json:"verdict,omitempty"`
	Regressed bool                          `json:"regressed"`
	Note      string                        `json:"note,omitempty"`
	P99       map[string]map[string]float64 `json:"p99_us,omitempty"`
}

// WriteJSON writes the comparison as JSON: per cell the ratio next/base of mean
// throughput with its 95 % CI, p-value, verdict and whether it regressed.
func WriteJSON(w io.Writer, c *Comparison) error {
	out := comparisonJSON{Base: c.Base, Next: c.Next, MaxRegression: c.MaxRegression, Regressed: c.Regressed(),
		OnlyBase: format.NonNil(c.OnlyBase), OnlyNext: format.NonNil(c.OnlyNext), Env: format.NonNil(c.Env), SpecChanged: c.SpecChanged}
	for _, cc := range c.Cells {
		j := cellChangeJSON{ID: cc.ID, Params: cc.Params, Runs: [2]int{cc.BaseRuns, cc.NextRuns}, Regressed: cc.Regressed, Note: cc.Note}
		if t := cc.Throughput; t != nil {
			j.Base, j.Next, j.Ratio, j.PValue = ptr(t.Baseline.Mean), ptr(t.Candidate.Mean), ptr(t.Ratio), ptr(t.UTest.P)
			j.CI95 = format.Interval(t.RatioCI)
			j.Verdict = string(t.Verdict)
		}
		for _, l := range cc.P99 {
			if j.P99 == nil {
				j.P99 = map[string]map[string]float64{}
			}
			j.P99[l.Op] = map[string]float64{"base": l.Base, "next": l.Next}
		}
		out.Cells = append(out.Cells, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return report.JSONError(enc.Encode(out))
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
