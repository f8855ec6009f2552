package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"testing"
)

// fakeSection counts the report's cells: a section added in one place, Report.Sections.
type fakeSection struct{}

func (fakeSection) Text(w io.Writer, r *Report) {
	fmt.Fprintf(w, "\nfake section: %d cells\n", len(r.Cells))
}

func (fakeSection) JSON(r *Report) (string, any) {
	return "fake", map[string]int{"cells": len(r.Cells)}
}

func (fakeSection) HTML(r *Report) (template.HTML, error) {
	return template.HTML(fmt.Sprintf(`<section id="fake"><h2>Fake</h2><p>%d cells</p></section>`, len(r.Cells))), nil
}

// A section added to the list appears in the text, the JSON and the HTML report, and the rest
// of each stays as it was.
func TestSectionInEveryFormat(t *testing.T) {
	r, err := Build(openFixture(t, "edge"))
	if err != nil {
		t.Fatal(err)
	}
	render := func() (txt, js, html string) {
		var a, b, c bytes.Buffer
		if err := WriteText(&a, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&c, r); err != nil {
			t.Fatal(err)
		}
		return a.String(), b.String(), c.String()
	}
	txt0, js0, html0 := render()
	r.Sections = append(r.Sections, fakeSection{})
	txt, js, html := render()
	n := len(r.Cells)
	want := fmt.Sprintf("\nfake section: %d cells\n", n)
	if !strings.Contains(txt, want) || strings.Replace(txt, want, "", 1) != txt0 {
		t.Errorf("text: the section is missing or changed the rest:\n%s", txt)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("JSON with the section does not parse: %v\n%s", err, js)
	}
	if got := strings.Join(strings.Fields(string(doc["fake"])), ""); got != fmt.Sprintf(`{"cells":%d}`, n) {
		t.Errorf("JSON fake = %s", got)
	}
	wantJS := fmt.Sprintf(",\n  \"fake\": {\n    \"cells\": %d\n  }\n}\n", n)
	if !strings.HasSuffix(js, wantJS) || strings.TrimSuffix(js, wantJS)+"\n}\n" != js0 {
		t.Errorf("JSON: the section is not appended after the report's keys:\n%s", js[max(0, len(js)-200):])
	}
	wantHTML := fmt.Sprintf(`<section id="fake"><h2>Fake</h2><p>%d cells</p></section>`, n)
	if !strings.Contains(html, wantHTML) || strings.Replace(html, wantHTML+"\n", "", 1) != html0 {
		t.Errorf("HTML: the section is missing or changed the rest")
	}
}
