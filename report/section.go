package report

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// Section is one part of the report after the overview table that renders itself in every
// format, from the Report that Build computed (it never reads the results file). Adding a
// section is one file with its type and one entry in defaultSections, plus its golden output:
// the text, JSON and HTML writers take every section from Report.Sections.
//
// Each method is called once per rendering, in the order of Report.Sections, and must be
// deterministic (golden files).
type Section interface {
	// Text writes the section to the terminal report, starting with a blank line; nothing
	// when it has nothing to say.
	Text(w io.Writer, r *Report)
	// JSON returns the section's key and value in the JSON report; key "" leaves it out. Keys
	// follow the report's own, in section order.
	JSON(r *Report) (key string, v any)
	// HTML returns the section's part of the page (a <section> element with its own h2);
	// "" leaves it out. An error is a template's, a defect of the section.
	HTML(r *Report) (template.HTML, error)
}

// defaultSections are the report's sections in the order every format shows them.
func defaultSections() []Section {
	return []Section{
		sweepsSection{},
		metricsSection{},
		textSection{id: "nodes", title: "Nodes of each cluster", text: writeTextNodes},
		textSection{id: "clusters", title: "Orchestrator clusters", text: writeTextClusters},
		textSection{id: "window", title: "Measured window", text: writeTextWindow},
		calibrationSection{textSection{id: "calibration", title: "Calibration", text: writeTextCalibration}},
		publishedSection{}, // report/published.go
	}
}

// sections are r.Sections, or defaultSections for a Report not made by Build.
func (r *Report) sections() []Section {
	if r.Sections == nil {
		return defaultSections()
	}
	return r.Sections
}

// textSection is a section whose page part is its terminal text, preformatted, under a heading
// of its own, and which adds no JSON key: the blocks whose figures the cells' metrics already
// carry in JSON (a cluster's node_ metrics; the measured window's cut and quiet-start wait).
type textSection struct {
	id, title string
	text      func(w io.Writer, r *Report)
}

var preTmpl = template.Must(template.New("pre").Parse(`<section id="{{.ID}}">
  <h2>{{.Title}}</h2>
  <pre>{{.Text}}</pre>
</section>`))

func (s textSection) Text(w io.Writer, r *Report) { s.text(w, r) }
func (textSection) JSON(*Report) (string, any)    { return "", nil }

func (s textSection) HTML(r *Report) (template.HTML, error) {
	var b strings.Builder
	s.text(&b, r)
	if strings.TrimSpace(b.String()) == "" {
		return "", nil
	}
	return renderHTML(preTmpl, struct{ ID, Title, Text string }{s.id, s.title, strings.TrimSpace(b.String())})
}

// appendSectionsJSON adds the sections' keys to doc, the report's JSON object as json.Encoder
// wrote it with a two-space indent, keeping that layout; doc is returned as is when no section
// has a key.
func appendSectionsJSON(doc []byte, r *Report) ([]byte, error) {
	var extra bytes.Buffer
	for _, s := range r.sections() {
		key, v := s.JSON(r)
		if key == "" {
			continue
		}
		var val bytes.Buffer
		enc := json.NewEncoder(&val)
		enc.SetIndent("  ", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, JSONError(err)
		}
		k, _ := json.Marshal(key)
		extra.WriteString(",\n  ")
		extra.Write(k)
		extra.WriteString(": ")
		extra.Write(bytes.TrimRight(val.Bytes(), "\n"))
	}
	if extra.Len() == 0 {
		return doc, nil
	}
	body := bytes.TrimSuffix(bytes.TrimRight(doc, "\n"), []byte("\n}"))
	return append(append(body, extra.Bytes()...), "\n}\n"...), nil
}

// sectionsHTML are the sections' parts of the page, in order.
func sectionsHTML(r *Report) ([]template.HTML, error) {
	var out []template.HTML
	for _, s := range r.sections() {
		h, err := s.HTML(r)
		if err != nil {
			return nil, fmt.Errorf("html: %w", err)
		}
		if h != "" {
			out = append(out, h)
		}
	}
	return out, nil
}

//go:embed assets/*.html.tmpl
var templates embed.FS

// sectionTemplate is the page template assets/<name>.html.tmpl (a section's, or the page's
// own), named name. Called once per template when the package loads: a template that does not
// parse is a defect of this build, and panics there (as template.Must).
func sectionTemplate(name string) *template.Template {
	text, err := templates.ReadFile("assets/" + name + ".html.tmpl")
	if err != nil {
		panic(err)
	}
	return template.Must(template.New(name).Parse(string(text)))
}

// renderHTML executes a section's template into its part of the page.
func renderHTML(t *template.Template, data any) (template.HTML, error) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("section %s: %w", t.Name(), err)
	}
	return template.HTML(b.String()), nil
}
