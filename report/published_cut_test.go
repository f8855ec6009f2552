package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/study"
)

// cutIsolation is studies/isolation.yaml with its matrix cut: the zip without the VM, or
// without the containers on the shared file system (bind). The published block is the study's.
func cutIsolation(t *testing.T, withoutBind bool) string {
	t.Helper()
	data, err := os.ReadFile("../studies/isolation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	zip := "    platform: [lxc,  lxc,      vm]\n    storage:  [bind, blockdev, blockdev]\n    network:  [host, host,     bridge]\n"
	cut := "    platform: [lxc,  lxc]\n    storage:  [bind, blockdev]\n    network:  [host, host]\n"
	if withoutBind {
		cut = "    platform: [lxc,      vm]\n    storage:  [blockdev, blockdev]\n    network:  [host,     bridge]\n"
	}
	if !strings.Contains(string(data), zip) {
		t.Fatal("studies/isolation.yaml's zip changed: update this test's cut")
	}
	return strings.Replace(string(data), zip, cut, 1)
}

// cutCells are the cut's cells: each box beside no neighbour (its baseline) and each fio one.
func cutCells(boxes [][3]string) []fixCell {
	mix := map[string]float64{"read": 0.7, "update": 0.3}
	var cells []fixCell
	for _, b := range boxes {
		for i, n := range []string{"none", "fsync-none", "fsync-low", "fsync-high"} {
			p := map[string]string{"platform": b[0], "storage": b[1], "network": b[2], "neighbour": n}
			thr := 900.0 - 150*float64(i)
			if b[1] == "blockdev" {
				thr = 800 - 20*float64(i)
			}
			cells = append(cells, fixCell{params: p, baseline: map[string]string{"neighbour": "none"}, thr: thr, cv: 0.03, mix: mix, reps: 4})
		}
	}
	return cells
}

func cutReport(t *testing.T, specText string, boxes [][3]string) *Report {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cut")
	writeFixture(t, dir, "study-isolation", specText, cutCells(boxes))
	st, err := results.OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := Build(st)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPublishedCut (issue 45): the isolation study cut to its containers runs with its
// published block unedited; the effect on the VM it left out is "not measured", naming the
// cells the matrix lacks, in text, JSON, CSV and HTML (goldens of this fixture: go test
// ./report -run TestPublishedCut -update rewrites them); the others are judged as ever.
func TestPublishedCut(t *testing.T) {
	r := cutReport(t, cutIsolation(t, false), [][3]string{{"lxc", "bind", "host"}, {"lxc", "blockdev", "host"}})
	s := newPublishedSection(r)
	if s.p == nil {
		t.Fatal("the cut study's published block did not decode")
	}
	want := map[string]study.Verdict{"fsync-neighbour": study.AgreesDirection, "kvm-over-lxc": study.NotMeasured,
		"own-journal": study.AgreesDirection, "io-share": study.NotComparable}
	if len(s.rows) != len(want) {
		t.Fatalf("rows %+v", s.rows)
	}
	for _, row := range s.rows {
		if row.Verdict != want[row.Effect] {
			t.Errorf("%s: %s (%s), want %s", row.Effect, row.Verdict, row.Why, want[row.Effect])
		}
		if row.Effect == "kvm-over-lxc" && row.Why != "no cell neighbour=fsync-high, platform=vm in this matrix" {
			t.Errorf("kvm-over-lxc: %q", row.Why)
		}
	}
	var text, csv bytes.Buffer
	s.Text(&text)
	golden(t, "published-cut.section.txt.golden", text.Bytes())
	_, v := s.JSON()
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "published-cut.section.json.golden", append(js, '\n'))
	h, err := s.HTML()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "published-cut.section.html.golden", []byte(h))
	if err := WriteCSVForm(&csv, r, "published-csv"); err != nil {
		t.Fatal(err)
	}
	golden(t, "published-cut.section.csv.golden", csv.Bytes())
	for name, out := range map[string]string{"text": text.String(), "json": string(js), "html": string(h), "csv": csv.String()} {
		if !strings.Contains(out, "not measured") || !strings.Contains(out, "platform=vm in this matrix") {
			t.Errorf("%s does not say kvm-over-lxc is not measured:\n%s", name, out)
		}
	}
}

// TestPublishedCutBaseline: an effect whose cells are in the cut but whose baseline is not
// (own-journal compares blockdev with bind, and the cut kept no bind cell) is not measured,
// naming the baseline it lacks; so is one whose cells' own baseline keys the cut left out.
func TestPublishedCutBaseline(t *testing.T) {
	r := cutReport(t, cutIsolation(t, true), [][3]string{{"lxc", "blockdev", "host"}, {"vm", "blockdev", "bridge"}})
	rows := newPublishedSection(r).rows
	got := map[string]string{}
	for _, row := range rows {
		got[row.Effect] = string(row.Verdict) + ": " + row.Why
	}
	want := map[string]string{
		"fsync-neighbour": "not measured: no cell neighbour=fsync-high, platform=lxc, storage=bind in this matrix",
		"kvm-over-lxc":    "not measured: its baseline, neighbour=fsync-high, network=host, platform=lxc, storage=bind, is not in this matrix",
		"own-journal":     "not measured: its baseline, neighbour=fsync-high, network=host, platform=lxc, storage=bind, is not in this matrix",
		// Not comparable in any matrix, and here not even measured: nothing was.
		"io-share": "not measured: no cell neighbour=fsync-high, platform=lxc, storage=bind in this matrix",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
}

// TestPublishedCSVForm: the full matrix's section as published-csv, one row per section row
// with the verdict; a report without a published block offers no such form.
func TestPublishedCSVForm(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSVForm(&b, publishedFixture(t), "published-csv"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "effect,cell,baseline,published,") ||
		!strings.Contains(b.String(), "published-port,platform=docker/network=bridge-published,platform=native/network=host,\"slower, 69 %\",69,,,") {
		t.Errorf("published-csv:\n%s", b.String())
	}
	if err := WriteCSVForm(&b, &Report{Spec: "name: x\n"}, "published-csv"); err == nil {
		t.Error("a report without a published block wrote published-csv")
	}
}
