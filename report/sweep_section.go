package report

import (
	_ "embed"
	"html/template"
	"io"
)

//go:embed assets/sweeps.html.tmpl
var sweepsPage string

var sweepsTmpl = template.Must(template.New("sweeps").Parse(sweepsPage))

// sweepsSection shows every sweep (report/sweep.go): in the terminal a table per curve, in
// JSON the key "sweeps" (per sweep key, one curve per combination of the other keys, with the
// points' throughput in ops/s, latency in µs and resource shares as summaries over the ok
// runs, and the saturation point; docs/report.md), on the page two charts and a table per sweep.
type sweepsSection struct{}

func (sweepsSection) Text(w io.Writer, r *Report) { writeTextSweeps(w, r) }

func (sweepsSection) JSON(r *Report) (string, any) {
	if len(r.Sweeps) == 0 {
		return "", nil
	}
	return "sweeps", r.Sweeps
}

func (sweepsSection) HTML(r *Report) (template.HTML, error) {
	if len(r.Sweeps) == 0 {
		return "", nil
	}
	return renderHTML(sweepsTmpl, struct{ Sweeps []sweepView }{sweepViews(r)})
}
