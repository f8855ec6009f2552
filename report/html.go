package report

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/report/format"
)

//go:embed assets/report.css
var pageCSS string

//go:embed assets/report.js
var pageJS string

var pageTmpl = sectionTemplate("page")

// HTMLGenerator is in the head of every HTML report (assets/page.html.tmpl): a file that holds
// it is a boxbench report, which report --html may replace.
const HTMLGenerator = `<meta name="generator" content="boxbench report">`

// WriteHTML writes the report as one self-contained HTML page: no network access, every
// chart inline SVG, styles and the script inline, with each run's time-series panels (which a
// report not built from a results file leaves out). The page is deterministic for a given
// results file.
func WriteHTML(w io.Writer, r *Report) error {
	sections, err := r.sections()
	if err != nil {
		return err
	}
	v := newPage(r)
	if v.Sections, v.Nav, err = sectionsHTML(sections); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if err := pageTmpl.Execute(bw, v); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	return bw.Flush()
}

// page is the template's view of a report: every number formatted, every chart drawn.
type page struct {
	Sections     []template.HTML // the Report's sections' own parts
	Nav          []Head          // the sections the navigation links to, after Overhead
	Title        string
	Name         string
	Meta         []kv
	Host         string
	CSS          template.CSS
	JS           template.JS
	Findings     []finding
	MoreFindings int
	Same         []string
	MoreSame     int
	Warnings     []warnView
	Cols         []string
	Ops          []string
	Axis         template.HTML
	HasForest    bool
	Groups       []groupView
	Spectra      []spectrumOp
	Stats        []statRow
	Adaptive     []string
	Runs         []cellRuns
	Skipped      []skipView
	Env          []kv
	CellEnv      []cellEnvView
	Spec         string
	TotalRuns    int
	TotalCells   int
	SkippedN     string
}

type kv struct{ K, V string }

type finding struct {
	Cell, Context, Baseline string
	Pct, CI, P, N           string
	Verdict                 string
}

type warnView struct {
	Code, Severity, Message, Cell, Runs string
}

type groupView struct {
	Title, Baseline string
	Rows            []rowView
}

type rowView struct {
	ID         string
	Anchor     string
	Values     []valueView
	N, NTitle  string
	NWarn      bool
	Thr, ThrSD string
	ThrWarn    []warnView
	Bar        template.HTML
	Ovh, OvhCI string
	Verdict    string
	VerdictCls string
	P          string
	Paired     [2]string // the comparison by rounds, two lines under P: the estimate, its CI and n
	Baseline   bool
	P99        []latView
	Warnings   []warnView
}

type valueView struct {
	V      string
	Repeat bool
}

type latView struct {
	V, Spread, Title string
	Warn             bool
}

type spectrumOp struct {
	Op    string
	Plots []spectrumPlot
}

type spectrumPlot struct {
	Title  string
	SVG    template.HTML
	Legend []legendItem
}

type legendItem struct {
	Label, Color, Detail string
	Baseline             bool
}

type statRow struct {
	ID, Anchor, Label                  string
	N, Mean, Median, SD, CoV, Min, Max string
	CI                                 string
	Lat                                []statLat
	Warnings                           []warnView
	Failed                             []Failure
}

type statLat struct {
	Op, Count, P50, P90, P95, P99, P999, Max, RunP99 string
}

type cellRuns struct {
	ID, Label, Summary string
	Anchor             string
	Heads              []panelHead
	Rows               []runRow
}

type panelHead struct {
	Title  string
	Legend []legendItem
}

type runRow struct {
	ID, Rep, Status, Reason string
	Panels                  []panelView
}

type panelView struct {
	SVG   template.HTML
	Empty string
}

type skipView struct{ ID, Reason string }

type cellEnvView struct {
	Cells []string
	Env   []kv
}

func newPage(r *Report) *page {
	cols := r.columnKeys()
	v := &page{Name: r.Experiment.Name, CSS: template.CSS(pageCSS), JS: template.JS(pageJS), Cols: cols,
		Ops: r.Ops, Spec: r.Spec, Host: strings.ReplaceAll(hostLine(r.Env), ", ", " · ")}
	v.Title = "boxbench · " + format.OrDash(r.Experiment.Name)
	v.Meta = []kv{{"experiment", format.OrDash(r.Experiment.ID)}, {"created", format.OrDash(r.Experiment.CreatedAt)},
		{"boxbench", format.OrDash(r.Experiment.Version)}, {"seed", format.OrDash(r.Experiment.Seed)}}
	if d := r.Env["dbms_package"]; d != "" {
		v.Host += " · " + d
	}
	for _, c := range r.Cells {
		if !c.Skipped() {
			v.TotalCells++
			v.TotalRuns += c.Runs + len(c.Failed)
		}
	}
	for _, w := range r.Warnings {
		v.Warnings = append(v.Warnings, warnView{Code: w.Code, Severity: w.Severity, Message: w.Message,
			Cell: cellName(r, r.Cell(w.Cell))})
	}
	v.findings(r)
	v.overview(r, cols)
	v.spectra(r)
	v.stats(r)
	v.Adaptive = r.adaptiveEvents()
	v.runs(r)
	for _, c := range r.Cells {
		if c.Skipped() {
			v.Skipped = append(v.Skipped, skipView{ID: c.ID, Reason: c.SkippedReason})
		}
	}
	v.SkippedN = plural(len(v.Skipped), "cell")
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		v.Env = append(v.Env, kv{k, r.Env[k]})
	}
	v.cellEnv(r)
	return v
}

// cellName is a cell's short name: its values of the varying keys.
func cellName(r *Report, c *Cell) string {
	if c == nil {
		return ""
	}
	if s := label(c.Params, r.Varying); s != "" {
		return s
	}
	return c.ID
}

func anchor(id string) string {
	var b strings.Builder
	b.WriteString("c-")
	for _, ch := range id {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '-', ch == '_':
			b.WriteRune(ch)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func views(ws []Warning, total int) []warnView {
	var out []warnView
	for _, w := range ws {
		runs := ""
		if w.Runs > 0 && !isReportLevel(w.Code) {
			runs = fmt.Sprintf("%d of %d runs", w.Runs, total)
		}
		out = append(out, warnView{Code: w.Code, Severity: w.Severity, Message: w.Message, Runs: runs})
	}
	return out
}

// concerns says which number a warning is about, so the page can mark it there.
func concerns(code string) string {
	switch code {
	case CodeRunsFailed, CodeNoOKRuns:
		return "n"
	case CodeUnderpowered, CodeVerdictNote, CodeBaselineNoRuns, CodeBaselineSkipped, CodeNoBaseline, CodeCompareFailed:
		return "overhead"
	case "too_few_ops_for_percentile", CodeHistogramMissing:
		return "latency"
	}
	return "throughput" // validity checks: the run's numbers as a whole
}
