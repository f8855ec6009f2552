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

// Section is one part of the report after the overview table: the model Build computed for it
// (once, from the Report and what Build loaded), which renders itself in every format from
// that model alone. Adding a section is one file (its builder and its rendering), one line in
// sectionBuilders where its place in the order is, and its golden output.
//
// Each method is called once per rendering, in the order of Report.Sections, and must be
// deterministic (golden files).
type Section interface {
	// Head names the section: its anchor on the page and its title.
	Head() Head
	// Text writes the section to the terminal report, starting with a blank line; nothing
	// when it has nothing to say.
	Text(w io.Writer)
	// JSON returns the section's key and value in the JSON report; key "" leaves it out. Keys
	// follow the report's own, in section order.
	JSON() (key string, v any)
	// HTML returns the section's part of the page (a <section> element with id Head().Anchor
	// and its own h2); "" leaves it out. An error is a template's, a defect of the section.
	HTML() (template.HTML, error)
	// CSV are the tables the section offers as a CSV form of its own (report --format
	// NAME); nil for none. A form's name is unique in the report.
	CSV() []CSVForm
}

// Head names a section: Anchor is the id of its <section> on the page, Title its name (the
// link's text in the page's navigation, and a textSection's h2); with Nav the navigation links
// to it whenever the section is on the page.
type Head struct {
	Anchor, Title string
	Nav           bool
}

// CSVForm is one CSV table a section offers: Name is the --format that writes it.
type CSVForm struct {
	Name  string
	Write func(w io.Writer) error
}

// builder computes a section's model from a Report whose own parts Build has made (cells,
// groups, warnings, sweeps, runs); an error fails Build.
type builder func(r *Report) (Section, error)

// namedBuilder is one section in the report's order; the name says which section failed.
type namedBuilder struct {
	name string
	b    builder
}

// sectionBuilders are the sections after the overview table, in the order every format shows
// them: one line a section, its builder in the section's own file. An explicit list, not
// registration at init, so the order is read in one place.
var sectionBuilders = []namedBuilder{
	{"sweeps", sweepsBuilder},
	{"where", whereBuilder},
	{"metrics", metricsBuilder},
	{"nodes", nodesBuilder},
	{"clusters", clustersBuilder},
	{"window", windowBuilder},
	{"calibration", calibrationBuilder},
	{"published", publishedBuilder},
}

// buildSections computes every registered section's model from r, in order.
func buildSections(r *Report) ([]Section, error) {
	out := make([]Section, 0, len(sectionBuilders))
	for _, rb := range sectionBuilders {
		s, err := rb.b(r)
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", rb.name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// sections are r.Sections; for a Report not made by Build (r.Sections nil) they are built
// now, and kept.
func (r *Report) sections() ([]Section, error) {
	if r.Sections == nil {
		s, err := buildSections(r)
		if err != nil {
			return nil, err
		}
		r.Sections = s
	}
	return r.Sections, nil
}

// textSection is a section whose page part is its terminal text, preformatted, under a heading
// of its own, and which adds no JSON key nor CSV form: the blocks whose figures the cells'
// metrics already carry in JSON (a cluster's node_ metrics; the measured window's cut and
// quiet-start wait). Its model is the text, written once when Build builds it.
type textSection struct {
	head Head
	text string
}

// textBuilder builds a textSection from what write prints of r.
func textBuilder(anchor, title string, write func(w io.Writer, r *Report)) builder {
	return func(r *Report) (Section, error) {
		var b strings.Builder
		write(&b, r)
		return textSection{Head{Anchor: anchor, Title: title}, b.String()}, nil
	}
}

var preTmpl = template.Must(template.New("pre").Parse(`<section id="{{.ID}}">
  <h2>{{.Title}}</h2>
  <pre>{{.Text}}</pre>
</section>`))

func (s textSection) Head() Head                   { return s.head }
func (s textSection) Text(w io.Writer)             { io.WriteString(w, s.text) }
func (textSection) JSON() (string, any)            { return "", nil }
func (textSection) CSV() []CSVForm                 { return nil }
func (s textSection) HTML() (template.HTML, error) { return preHTML(s.head, s.text) }

// preHTML is text, preformatted, under the section's heading; "" when text is blank.
func preHTML(h Head, text string) (template.HTML, error) {
	if strings.TrimSpace(text) == "" {
		return "", nil
	}
	return renderHTML(preTmpl, struct{ ID, Title, Text string }{h.Anchor, h.Title, strings.TrimSpace(text)})
}

// appendSectionsJSON adds the sections' keys to doc, the report's JSON object as json.Encoder
// wrote it with a two-space indent, keeping that layout; doc is returned as is when no section
// has a key.
func appendSectionsJSON(doc []byte, sections []Section) ([]byte, error) {
	var extra bytes.Buffer
	for _, s := range sections {
		key, v := s.JSON()
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

// sectionsHTML are the sections' parts of the page, in order, and the page's navigation links
// to those that ask for one (Head.Nav) and are on the page.
func sectionsHTML(sections []Section) (parts []template.HTML, nav []Head, err error) {
	for _, s := range sections {
		h, err := s.HTML()
		if err != nil {
			return nil, nil, fmt.Errorf("html: %w", err)
		}
		if h == "" {
			continue
		}
		parts = append(parts, h)
		if head := s.Head(); head.Nav {
			nav = append(nav, head)
		}
	}
	return parts, nav, nil
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
