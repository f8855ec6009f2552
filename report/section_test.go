package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"testing"
)

// fakeSection counts the report's cells when Build builds it: a section added the way the
// recipe says (docs/architecture.md), by its builder and one line in sectionBuilders.
type fakeSection struct{ cells int }

func (fakeSection) Head() Head { return Head{Anchor: "fake", Title: "Fake", Nav: true} }

func (s fakeSection) Text(w io.Writer) { fmt.Fprintf(w, "\nfake section: %d cells\n", s.cells) }

func (s fakeSection) JSON() (string, any) { return "fake", map[string]int{"cells": s.cells} }

func (s fakeSection) HTML() (template.HTML, error) {
	return template.HTML(fmt.Sprintf(`<section id="fake"><h2>Fake</h2><p>%d cells</p></section>`, s.cells)), nil
}

func (s fakeSection) CSV() []CSVForm {
	return []CSVForm{{Name: "fake-csv", Write: func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "cells\n%d\n", s.cells)
		return err
	}}}
}

// A section listed in sectionBuilders appears in the text, the JSON and the HTML report (and
// in the page's navigation), offers its CSV form, and the rest of each stays as it was.
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
	if err := WriteCSVForm(io.Discard, r, "fake-csv"); err == nil {
		t.Fatal("a CSV form no section offers was written")
	}
	saved := sectionBuilders
	t.Cleanup(func() { sectionBuilders = saved })
	sectionBuilders = append(slices.Clone(saved), namedBuilder{"fake", func(r *Report) (Section, error) { return fakeSection{len(r.Cells)}, nil }})
	if r.Sections, err = buildSections(r); err != nil {
		t.Fatal(err)
	}
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
	const wantNav = `<a href="#fake">Fake</a>`
	rest := strings.Replace(strings.Replace(html, wantHTML+"\n", "", 1), wantNav, "", 1)
	if !strings.Contains(html, wantHTML) || !strings.Contains(html, wantNav) || rest != html0 {
		t.Errorf("HTML: the section or its link is missing, or it changed the rest")
	}
	var csv bytes.Buffer
	if err := WriteCSVForm(&csv, r, "fake-csv"); err != nil || csv.String() != fmt.Sprintf("cells\n%d\n", n) {
		t.Errorf("CSV form fake-csv: %q, %v", csv.String(), err)
	}
}
