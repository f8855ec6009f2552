package report

import (
	"slices"
	"testing"
)

// TestCSVFormsListed: every CSV form a section of the golden reports offers is in CSVForms, the
// list `report --format` accepts, and every listed form is offered by some report.
func TestCSVFormsListed(t *testing.T) {
	reports := []*Report{whereFixture(t), publishedFixture(t)}
	for _, f := range fixtures {
		r, err := Build(openFixture(t, f.name))
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, r)
	}
	offered := map[string]bool{CSVRuns: true}
	for _, r := range reports {
		sections, err := r.sections()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sections {
			for _, f := range s.CSV() {
				offered[f.Name] = true
				if !slices.Contains(CSVForms(), f.Name) {
					t.Errorf("section %s offers CSV form %q, which CSVForms lacks", s.Head().Anchor, f.Name)
				}
			}
		}
	}
	for _, name := range CSVForms() {
		if !offered[name] {
			t.Errorf("CSVForms lists %q, which no report offers", name)
		}
	}
}
