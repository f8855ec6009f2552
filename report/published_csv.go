package report

import (
	"encoding/csv"
	"io"
	"strconv"
)

// publishedCSV is the published section's CSV form ("published-csv"): one row per row of the
// section — the effect, the compared cells, the published figure (percent of the baseline's
// throughput, positive = slower), this host's estimate with its 95 % interval and the ok runs on
// each side, and the verdict with its reason ("not measured" for an effect whose cells a cut
// matrix left out). Missing values are empty.
func writePublishedCSV(w io.Writer, rows []PublishedRow) error {
	cw := csv.NewWriter(w)
	head := []string{"effect", "cell", "baseline", "published", "published_overhead_pct", "published_range_lo_pct",
		"published_range_hi_pct", "source", "overhead_pct", "ci95_lo_pct", "ci95_hi_pct", "n", "baseline_n", "verdict", "why"}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, row := range rows {
		pct, lo, hi := "", "", ""
		if row.PublishedPct != nil {
			pct = num(*row.PublishedPct)
		}
		if len(row.PublishedRange) == 2 {
			lo, hi = num(row.PublishedRange[0]), num(row.PublishedRange[1])
		}
		est := []string{"", "", "", "", ""}
		if e := row.Estimate; e != nil {
			est = []string{num(e.OverheadPct), "", "", strconv.Itoa(e.N), strconv.Itoa(e.BaselineN)}
			if e.Valid {
				est[1], est[2] = num(e.Low), num(e.High)
			}
		}
		rec := append([]string{row.Effect, row.Cell, row.Baseline, row.Published, pct, lo, hi, row.Source}, est...)
		if err := cw.Write(append(rec, string(row.Verdict), row.Why)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
