package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
	"github.com/boxbench/boxbench/study"
)

// publishedSpec is a study's experiment: its published block has an effect for each verdict
// the report can reach from stored runs.
const publishedSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: published
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 8, duration: 10s, warmup: 3s}
dataset: {records: 10000}
matrix:
  platform: [native, docker]
  network: [host, bridge-published, bridge-direct]
repetitions: 4
baseline: {platform: native, network: host}
published:
  study: "A. Author and B. Author, A study of boxes, Some Venue 2016"
  where: "doi:10.0000/example"
  effects:
    - {name: host-mode, claim: the host network costs nothing, cells: {platform: docker, network: host}, direction: none, source: "Sec. 3"}
    - {name: published-port, claim: a published port costs most of the throughput, cells: {platform: docker, network: bridge-published}, direction: slower, overhead: 69, source: "Fig. 2 (7100 vs 2200 tps)"}
    - {name: bridge-size, claim: a bridge costs about 40 %, cells: {platform: docker, network: bridge-direct}, baseline: {network: host}, direction: slower, overhead: 40, range: [35, 45], source: "Table 4"}
    - {name: bridge-direction, claim: a bridge is slower, cells: {platform: docker, network: bridge-direct}, direction: slower, source: "Sec. 4 (direction only)"}
    - {name: bridge-faster, claim: a bridge is faster, cells: {platform: docker, network: bridge-direct}, direction: faster, source: "Sec. 5"}
    - {name: native-bridge, claim: natively a bridge costs, cells: {platform: native, network: bridge-direct}, direction: slower, source: "Sec. 6"}
    - {name: deviation, claim: three VMs on three hosts, cells: {platform: docker, network: host}, direction: slower, source: "Sec. 7", notComparable: "one host stands in for three"}
`

func publishedCells() []fixCell {
	mix := map[string]float64{"read": 0.95, "update": 0.05}
	p := func(pl, nw string) map[string]string { return map[string]string{"platform": pl, "network": nw} }
	bl := map[string]string{"platform": "native", "network": "host"}
	return []fixCell{
		{params: p("native", "host"), baseline: bl, thr: 30000, cv: 0.02, mix: mix, reps: 4},
		{params: p("native", "bridge-published"), baseline: bl, skipped: "platform native has no bridge-published"},
		{params: p("native", "bridge-direct"), baseline: bl, skipped: "platform native has no bridge-direct"},
		{params: p("docker", "host"), baseline: bl, thr: 29950, cv: 0.02, mix: mix, reps: 4},
		{params: p("docker", "bridge-published"), baseline: bl, thr: 9300, cv: 0.02, mix: mix, reps: 4},
		{params: p("docker", "bridge-direct"), baseline: bl, thr: 27000, cv: 0.01, mix: mix, reps: 4},
	}
}

// TestPublishedVerdicts: each effect of the fixture reaches the verdict its numbers call for,
// and every format carries the section.
func TestPublishedVerdicts(t *testing.T) {
	r := publishedFixture(t)
	rows := r.publishedRows(publishedOf(r.Spec))
	want := map[string]study.Verdict{
		"host-mode": study.AgreesSize, "published-port": study.AgreesSize, "bridge-size": study.AgreesDirection,
		"bridge-direction": study.AgreesDirection, "bridge-faster": study.Contradicts, "native-bridge": study.CannotTell,
		"deviation": study.NotComparable,
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for _, row := range rows {
		if row.Verdict != want[row.Effect] {
			t.Errorf("%s: %s (%s), want %s; estimate %+v", row.Effect, row.Verdict, row.Why, want[row.Effect], row.Estimate)
		}
	}
	// bridge-size names its own baseline: docker on the host network, not the native baseline.
	for _, row := range rows {
		if row.Effect == "bridge-size" && row.Baseline != "platform=docker/network=host" {
			t.Errorf("bridge-size compared with %q", row.Baseline)
		}
	}
	var text, js, page bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "json": js.String(), "html": page.String()} {
		if !strings.Contains(out, "A. Author and B. Author") || !strings.Contains(out, "agrees in direction only") {
			t.Errorf("%s has no published section", name)
		}
	}
}

// TestPublishedEmulated: a comparison with an emulated box is never judged: "not comparable",
// whatever its numbers.
func TestPublishedEmulated(t *testing.T) {
	o := stats.Comparison{OverheadPct: 69, OverheadPctCI: stats.Interval{Lo: 60, Hi: 75, Valid: true}}
	base := &Cell{ID: "platform=native", Params: map[string]string{"platform": "native"}, BaselineID: "platform=native", Runs: 4}
	vm := &Cell{ID: "platform=vm", Params: map[string]string{"platform": "vm"}, BaselineID: "platform=native", Runs: 4, Emulated: true, Overhead: &o}
	r := &Report{Cells: []*Cell{base, vm}}
	e := study.Effect{Name: "vm", Cells: map[string]string{"platform": "vm"}, Direction: study.Slower, Overhead: ptr(69.0), Source: "Fig. 5"}
	rows := r.publishedRows(&study.Published{Study: "s", Effects: []study.Effect{e}})
	if len(rows) != 1 || rows[0].Verdict != study.NotComparable || !strings.Contains(rows[0].Why, "emulated") {
		t.Fatalf("rows %+v", rows)
	}
}

// TestPublishedNone: a spec without a published block shows no section in any format.
func TestPublishedNone(t *testing.T) {
	r := &Report{Spec: "name: x\n"}
	s := newPublishedSection(r)
	var b bytes.Buffer
	s.Text(&b)
	key, _ := s.JSON()
	h, err := s.HTML()
	if b.Len() != 0 || key != "" || h != "" || err != nil {
		t.Errorf("text %q, key %q, html %q, %v", b.String(), key, h, err)
	}
}

// TestGoldenPublished keeps the section's text, JSON and HTML (go test ./report -run
// TestGoldenPublished -update rewrites them).
func TestGoldenPublished(t *testing.T) {
	s := newPublishedSection(publishedFixture(t))
	var text bytes.Buffer
	s.Text(&text)
	golden(t, "published.section.txt.golden", text.Bytes())
	_, v := s.JSON()
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "published.section.json.golden", append(js, '\n'))
	h, err := s.HTML()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "published.section.html.golden", []byte(h))
}

// publishedFixture builds the report of publishedSpec's stored runs.
func publishedFixture(t *testing.T) *Report { return publishedFixtureOf(t, publishedSpec) }

// publishedFixtureOf builds the report of spec's stored runs of publishedCells.
func publishedFixtureOf(t *testing.T, spec string) *Report {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "published")
	writeFixture(t, dir, "published", spec, publishedCells())
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

// TestPublishedUntrusted: a block edited into a results file with an escape sequence shows
// nothing rather than writing it to the terminal.
func TestPublishedUntrusted(t *testing.T) {
	spec := strings.Replace(publishedSpec, "a bridge is slower", `"a bridge\u001b]0;pwned\u0007"`, 1)
	var doc struct{ Published *study.Published }
	if err := yaml.Unmarshal([]byte(spec), &doc); err != nil || doc.Published == nil || !strings.Contains(doc.Published.Effects[3].Claim, "\x1b") {
		t.Fatalf("the edited block must decode, with its escape: %v", err)
	}
	if p := publishedOf(spec); p != nil {
		t.Errorf("decoded %+v", p)
	}
	if publishedOf(publishedSpec) == nil {
		t.Error("the fixture's block did not decode")
	}
}

func ptr(v float64) *float64 { return &v }

// TestPublishedForecast: a "cannot tell" with an interval says how many runs per cell would
// decide it here, in its why and as data.
func TestPublishedForecast(t *testing.T) {
	spec := strings.Replace(publishedSpec, "  effects:\n", "  effects:\n    - {name: small, claim: the host network costs 3 %, cells: {platform: docker, network: host}, direction: slower, overhead: 3, source: \"Sec. 8\"}\n", 1)
	r := publishedFixtureOf(t, spec)
	for _, row := range r.publishedRows(publishedOf(r.Spec)) {
		switch {
		case row.Effect == "small" && (row.Verdict != study.CannotTell || row.Forecast == nil || row.Forecast.Target != 3 ||
			row.Forecast.Runs <= 4 || !strings.Contains(row.Why, "runs per cell would detect 3 %")):
			t.Errorf("small: %s (%s), forecast %+v, estimate %+v", row.Verdict, row.Why, row.Forecast, row.Estimate)
		case row.Effect != "small" && row.Forecast != nil:
			t.Errorf("%s (%s) has a forecast %+v", row.Effect, row.Verdict, row.Forecast)
		}
	}
}
