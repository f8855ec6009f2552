package report

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// whereSpec is the published port's question: where does its extra CPU per operation go?
const whereSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: where
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 8, duration: 10s, warmup: 3s}
matrix:
  platform: [native, docker, lxc]
  network: [host, bridge-published, bridge-direct]
repetitions: 5
baseline: {platform: native, network: host}
`

// whereComp is a component's CPU per operation in a fixture cell: mean and run-to-run SD, ns.
type whereComp struct {
	name     string
	mean, sd float64
}

// whereNative is the native baseline's account: the components of a Redis on the host's
// network (ns per operation); kernel.interrupts and other.processes are small and noisy, and
// can be negative in a run, as tick accounting makes them.
var whereNative = []whereComp{
	{"database.user", 14000, 300}, {"database.system", 9000, 250}, {"client.generator", 10000, 200},
	{"kernel.ksoftirqd", 300, 40}, {"kernel.kthreads", 200, 30}, {"kernel.interrupts", 60, 120},
	{"other.processes", 700, 300},
}

var whereNativeCosts = map[string]float64{
	"io_write_bytes": 180, "io_write_ops": 0.02, "journal_commits": 0.004, "context_switches_voluntary": 1.9,
	"context_switches_involuntary": 0.05, "minor_faults": 0.01, "softirq_net_rx": 1.1, "softirq_net_tx": 0.9,
	"softirq_timer": 0.05, "softirq_rcu": 0.03,
}

// whereAccount draws one run's account from comps and costs (each cost ±5 %), the host's busy
// CPU their sum within sampling error, on an rng of the run's own so the other figures of the
// fixture stay as they were.
func whereAccount(comps []whereComp, costs map[string]float64, softirq float64, facts map[string]string) func(string) (map[string]float64, map[string]string) {
	return func(runID string) (map[string]float64, map[string]string) {
		h := fnv.New64a()
		h.Write([]byte(runID))
		rng := rand.New(rand.NewPCG(h.Sum64(), 44))
		m := map[string]float64{}
		sum := 0.0
		for _, c := range comps {
			g, n, _ := strings.Cut(c.name, ".")
			v := c.mean + c.sd*rng.NormFloat64()
			m[results.CPUPerOp(g, n)] = v
			sum += v
		}
		m[results.CPUPerOp(results.GroupHost, "busy")] = sum * (1 + 0.002*rng.NormFloat64())
		m[metricSoftirqPerOp] = softirq * (1 + 0.06*rng.NormFloat64())
		for _, what := range slices.Sorted(maps.Keys(costs)) {
			m[results.PerOp(what)] = costs[what] * (1 + 0.05*rng.NormFloat64())
		}
		out := map[string]string{results.FactInterrupts: "idle"}
		for k, v := range facts {
			out[k] = v
		}
		return m, out
	}
}

// whereCells: the native baseline; docker on the host network (no difference to explain);
// docker behind a published port (docker-proxy and the kernel's soft interrupts, and a
// component the runs could not measure); docker on the bridge address with a single run; lxc,
// whose runs carry no account (no section for it).
func whereCells() []fixCell {
	mix := map[string]float64{"read": 0.95, "update": 0.05}
	p := func(pl, nw string) map[string]string { return map[string]string{"platform": pl, "network": nw} }
	bl := map[string]string{"platform": "native", "network": "host"}
	shim := append(append([]whereComp{}, whereNative...), whereComp{"box.containerd-shim", 40, 8})
	published := []whereComp{
		{"database.user", 14100, 300}, {"database.system", 9800, 250}, {"client.generator", 10300, 200},
		{"box.docker-proxy", 6100, 350}, {"box.containerd-shim", 45, 8},
		{"kernel.ksoftirqd", 1500, 120}, {"kernel.kthreads", 210, 30}, {"kernel.interrupts", -40, 130},
		{"other.processes", 800, 300},
	}
	pubCosts := map[string]float64{}
	for k, v := range whereNativeCosts {
		pubCosts[k] = v
	}
	pubCosts["softirq_net_rx"], pubCosts["softirq_net_tx"], pubCosts["context_switches_voluntary"] = 3.1, 2.0, 3.8
	notMeasured := map[string]string{results.FactNotAccounted: "kernel.kworker: kworkers serve every device on this kernel; not attributable to one box"}
	cells := []fixCell{
		{params: p("native", "host"), baseline: bl, thr: 30000, cv: 0.02, mix: mix, reps: 5,
			where: whereAccount(whereNative, whereNativeCosts, 1200, nil)},
		{params: p("native", "bridge-published"), baseline: bl, skipped: "platform native has no bridge-published"},
		{params: p("native", "bridge-direct"), baseline: bl, skipped: "platform native has no bridge-direct"},
		{params: p("docker", "host"), baseline: bl, thr: 29900, cv: 0.02, mix: mix, reps: 5,
			where: whereAccount(shim, whereNativeCosts, 1200, nil)},
		{params: p("docker", "bridge-published"), baseline: bl, thr: 23000, cv: 0.02, mix: mix, reps: 5,
			where: whereAccount(published, pubCosts, 4700, notMeasured)},
		{params: p("docker", "bridge-direct"), baseline: bl, thr: 27000, cv: 0.02, mix: mix, reps: 1,
			where: whereAccount(shim, whereNativeCosts, 2000, nil)},
		{params: p("lxc", "host"), baseline: bl, thr: 29800, cv: 0.02, mix: mix, reps: 3},
		{params: p("lxc", "bridge-published"), baseline: bl, skipped: "platform lxc has no bridge-published"},
		{params: p("lxc", "bridge-direct"), baseline: bl, skipped: "platform lxc has no bridge-direct"},
	}
	return cells
}

// whereFixture builds the report of whereSpec's stored runs.
func whereFixture(t *testing.T) *Report {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "where")
	writeFixture(t, dir, "where", whereSpec, whereCells())
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

func whereOf(t *testing.T, r *Report) whereSection {
	t.Helper()
	for _, s := range r.Sections {
		if w, ok := s.(whereSection); ok {
			return w
		}
	}
	t.Fatal("no where section in the report")
	return whereSection{}
}

// TestGoldenWhere keeps the section's text, JSON, CSV form and HTML (go test ./report -run
// TestGoldenWhere -update rewrites them).
func TestGoldenWhere(t *testing.T) {
	r := whereFixture(t)
	s := whereOf(t, r)
	var text bytes.Buffer
	s.Text(&text)
	golden(t, "where.section.txt.golden", text.Bytes())
	key, v := s.JSON()
	if key != "where_time_goes" {
		t.Errorf("JSON key %q", key)
	}
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "where.section.json.golden", append(js, '\n'))
	var csv bytes.Buffer
	if err := WriteCSVForm(&csv, r, "where-csv"); err != nil {
		t.Fatal(err)
	}
	golden(t, "where.section.csv.golden", csv.Bytes())
	h, err := s.HTML()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "where.section.html.golden", []byte(h))
}

// TestWhereFixture: the cells with an account are shown, lxc's runs carry none; the
// published port's sentence names docker-proxy and the kernel's soft-interrupt thread with
// intervals; the host network has no difference to explain; one run names nothing; the
// component the runs could not measure says so and is never a 0.
func TestWhereFixture(t *testing.T) {
	r := whereFixture(t)
	s := whereOf(t, r)
	var ids []string
	for _, c := range s.cells {
		ids = append(ids, c.Cell)
	}
	want := "platform=native/network=host platform=docker/network=host platform=docker/network=bridge-published platform=docker/network=bridge-direct"
	if strings.Join(ids, " ") != want {
		t.Fatalf("cells %v, want %s", ids, want)
	}
	sentence := func(id string) string {
		for _, c := range s.cells {
			if c.Cell == id && c.Versus != nil {
				return c.Versus.Sentence
			}
		}
		t.Fatalf("no comparison for %s", id)
		return ""
	}
	pub := sentence("platform=docker/network=bridge-published")
	// docker-proxy covers more than half of the difference: the rule stops there.
	if !strings.Contains(pub, "of which box docker-proxy +6.") || !strings.Contains(pub, "in soft interrupts host-wide +3.") {
		t.Errorf("published port: %s", pub)
	}
	if strings.Contains(pub, "client") || strings.Contains(pub, "kworker") || strings.Contains(pub, "ksoftirqd") {
		t.Errorf("published port names more than it should: %s", pub)
	}
	// The host network has no proxy and no extra hop: whatever its sentence says, it names
	// neither.
	if h := sentence("platform=docker/network=host"); strings.Contains(h, "docker-proxy") || strings.Contains(h, "kernel") {
		t.Errorf("host network: %s", h)
	}
	if d := sentence("platform=docker/network=bridge-direct"); !strings.Contains(d, "a single run names no component") {
		t.Errorf("one run: %s", d)
	}
	var text bytes.Buffer
	s.Text(&text)
	if !regexp.MustCompile(`kernel kworker +not measured \(below\)`).MatchString(text.String()) ||
		!strings.Contains(text.String(), "not measured: kernel kworker: kworkers serve every device on this kernel; not attributable") {
		t.Errorf("the unmeasured component is not said so:\n%s", text.String())
	}
	for _, line := range strings.Split(text.String(), "\n") {
		if strings.Contains(line, "kworker") && strings.Contains(line, " 0 ") {
			t.Errorf("the unmeasured component shows a 0: %q", line)
		}
	}
	if strings.Contains(text.String(), "lxc") {
		t.Errorf("a cell without the account is shown:\n%s", text.String())
	}
	// The page's metrics table leaves the section's metrics to it.
	for _, v := range r.metricViews() {
		if strings.HasPrefix(v.Name, "cpu_ns_per_op.") || strings.HasPrefix(v.Name, "per_op.") {
			t.Errorf("metrics table lists %s", v.Name)
		}
	}
}

// TestWhereAbsent: a report whose runs carry no account shows no section in any format, and
// its CSV form is the header alone.
func TestWhereAbsent(t *testing.T) {
	r, err := Build(openFixture(t, "quickstart"))
	if err != nil {
		t.Fatal(err)
	}
	s := whereOf(t, r)
	var b bytes.Buffer
	s.Text(&b)
	key, _ := s.JSON()
	h, err := s.HTML()
	if b.Len() != 0 || key != "" || h != "" || err != nil || len(s.cells) != 0 {
		t.Errorf("text %q, key %q, html %q, %v", b.String(), key, h, err)
	}
	var csv bytes.Buffer
	if err := WriteCSVForm(&csv, r, "where-csv"); err != nil || strings.Count(csv.String(), "\n") != 1 {
		t.Errorf("where-csv: %q, %v", csv.String(), err)
	}
}

// diffFrom builds a difference from two samples, as compareWhere does.
func diffFrom(base, cand []float64) *WhereDiff {
	return diffOf(figure(cand, 1, unitMicrosPerOp), figure(base, 1, unitMicrosPerOp), len(cand), len(base), true, unitMicrosPerOp)
}

// TestWhereSentence: the rule of docs/report.md on hand-made differences.
func TestWhereSentence(t *testing.T) {
	comp := func(name string, base, cand []float64) WhereComponent {
		g, n, _ := strings.Cut(name, " ")
		return WhereComponent{Group: g, Name: n, Diff: diffFrom(base, cand)}
	}
	flat := []float64{10, 11, 9, 10, 10}
	total := diffFrom([]float64{50, 51, 49, 50, 50}, []float64{60, 61, 59, 60, 60})
	clear := []WhereComponent{
		comp("database user", flat, []float64{10.2, 11.1, 9, 10.4, 10}),     // small, CI includes 0
		comp("box docker-proxy", flat, []float64{16, 17, 15, 16, 16}),       // +6
		comp("kernel ksoftirqd", flat, []float64{13, 14, 12, 13, 13}),       // +3
		comp("other processes", flat, []float64{9, 14, 4, 12, 8}),           // noisy
		comp("client generator", flat, []float64{9.4, 10.4, 8.4, 9.4, 9.4}), // −0.6, excludes 0, wrong sign
	}
	got := whereSentence("docker", "native", total, clear, nil)
	if !strings.Contains(got, "of which box docker-proxy +6.0") || strings.Contains(got, "ksoftirqd") {
		t.Errorf("docker-proxy alone covers half: %s", got)
	}
	// Without docker-proxy, ksoftirqd is named though it covers less than half: all that
	// exclude 0 are.
	got = whereSentence("docker", "native", total, append([]WhereComponent{clear[0]}, clear[2:]...), nil)
	if !strings.Contains(got, "of which kernel ksoftirqd +3.0") || strings.Contains(got, "client") || strings.Contains(got, "database") {
		t.Errorf("ksoftirqd: %s", got)
	}
	// None excludes 0: the largest is said, and that the intervals do not single one out.
	noisy := []WhereComponent{comp("box docker-proxy", flat, []float64{4, 25, 10, 16, 22}), clear[3]}
	got = whereSentence("docker", "native", total, noisy, nil)
	if !strings.Contains(got, "the largest component is box docker-proxy") || !strings.Contains(got, "do not single one out") {
		t.Errorf("none singled out: %s", got)
	}
	// None in the total's direction at all: the largest is named all the same.
	against := []WhereComponent{comp("client generator", flat, []float64{8, 10, 6, 12, 9})}
	if got = whereSentence("docker", "native", total, against, nil); !strings.Contains(got, "the largest component is client generator -1.0") {
		t.Errorf("none in the total's direction: %s", got)
	}
	// The total's interval includes 0: nothing to explain, whatever the components say.
	none := diffFrom([]float64{50, 51, 49, 50, 50}, []float64{50, 52, 48, 51, 49})
	if got = whereSentence("docker", "native", none, clear, nil); !strings.Contains(got, "no difference to explain") || strings.Contains(got, "docker-proxy") {
		t.Errorf("no difference: %s", got)
	}
	// One run: no component is named.
	one := diffFrom([]float64{50, 51, 49, 50, 50}, []float64{60})
	single := []WhereComponent{comp("box docker-proxy", flat, []float64{16})}
	if got = whereSentence("docker", "native", one, single, nil); !strings.Contains(got, "n < 2") || strings.Contains(got, "docker-proxy") {
		t.Errorf("single run: %s", got)
	}
}

// TestWhereNotMeasured: a component a run could not measure is "not measured (why)" in the
// table and has no difference; one absent from the baseline's box counts as 0 there.
func TestWhereNotMeasured(t *testing.T) {
	acc := func(m map[string]float64, nm string) runAccount {
		return runAccount{metrics: m, facts: map[string]string{results.FactNotAccounted: nm}}
	}
	busy := results.CPUPerOp(results.GroupHost, "busy")
	proxy := results.CPUPerOp("box", "docker-proxy")
	base := buildWhereCell("b", "native", []runAccount{
		acc(map[string]float64{busy: 10}, ""), acc(map[string]float64{busy: 11}, "")})
	cand := buildWhereCell("c", "docker", []runAccount{
		acc(map[string]float64{busy: 20, proxy: 5}, "neighbour.fio: pod on another node; kernel.jbd2: no journal found"),
		acc(map[string]float64{busy: 21, proxy: 6}, "neighbour.fio: pod on another node")})
	compareWhere(cand, base)
	byName := map[string]WhereComponent{}
	for _, c := range cand.Components {
		byName[componentName(c)] = c
	}
	fio, jbd2, dp := byName["neighbour fio"], byName["kernel jbd2"], byName["box docker-proxy"]
	if v := componentValue(fio); v != "not measured (pod on another node)" || fio.CPU != nil || fio.Diff.Mean != nil {
		t.Errorf("neighbour fio: %q %+v", v, fio.Diff)
	}
	if v := componentValue(jbd2); v != "not measured (no journal found (1 of 2 runs))" {
		t.Errorf("kernel jbd2: %q", v)
	}
	if dp.Diff == nil || dp.Diff.Mean == nil || *dp.Diff.Mean != 5.5e-3 || !strings.Contains(dp.Diff.Note, "0 there") {
		t.Errorf("docker-proxy against a baseline without it: %+v", dp.Diff)
	}
	for _, c := range cand.Components {
		if strings.Contains(diffText(c.Diff)+componentValue(c), " 0 ") {
			t.Errorf("%s shows a zero: %q %q", componentName(c), componentValue(c), diffText(c.Diff))
		}
	}
}

// TestWhereInChromium renders the fixture's page with the section in a real browser: the
// page's self-check passes, every bar is a chart with visible marks.
func TestWhereInChromium(t *testing.T) {
	testenv.NeedCommands(t, "chromium")
	r := whereFixture(t)
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), `data-chart="platform=`); n < 4 {
		t.Errorf("%d where bars on the page, want 4", n)
	}
	file := filepath.Join(t.TempDir(), "where.html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, console := renderCheck(t, file)
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	if got["ok"] != "true" {
		t.Errorf("page self-check: data-ok=%q, problems: %s", got["ok"], got["problems"])
	}
	if n, _ := strconv.Atoi(got["charts"]); n != strings.Count(b.String(), "data-chart=") {
		t.Errorf("page checked %s charts", got["charts"])
	}
}

// TestWhereBooksWithoutBusy: a host busy CPU of 0 in every run leaves no balance to show, not
// a balance of 0 %.
func TestWhereBooksWithoutBusy(t *testing.T) {
	busy := results.CPUPerOp(results.GroupHost, "busy")
	c := buildWhereCell("c", "c", []runAccount{{metrics: map[string]float64{busy: 0, results.CPUPerOp("database", "user"): 3}}})
	if got := booksText(c); !strings.Contains(got, "no run has host busy CPU") || strings.Contains(got, "%") {
		t.Errorf("books: %s", got)
	}
}

// TestWhereBaselineWithoutAccount: a cell whose baseline's runs carry no account is shown with
// a note instead of differences, and a cell with no account of its own is not shown.
func TestWhereBaselineWithoutAccount(t *testing.T) {
	busy := results.CPUPerOp(results.GroupHost, "busy")
	result := func(m map[string]float64) json.RawMessage {
		b, err := json.Marshal(map[string]any{"metrics": m})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	r := &Report{
		Cells: []*Cell{
			{ID: "platform=native", BaselineID: "platform=native", RunIDs: []string{"n1", "n2"}},
			{ID: "platform=docker", BaselineID: "platform=native", RunIDs: []string{"d1", "d2"}},
		},
		Runs: []results.RunRow{
			{ID: "n1", Result: result(map[string]float64{"client_cpu_per_op_ns": 9000})},
			{ID: "n2", Result: result(map[string]float64{"client_cpu_per_op_ns": 9100})},
			{ID: "d1", Result: result(map[string]float64{busy: 30000})},
			{ID: "d2", Result: result(map[string]float64{busy: 31000})},
		},
	}
	cells := r.whereCells()
	if len(cells) != 1 || cells[0].Cell != "platform=docker" || cells[0].Versus != nil ||
		!strings.Contains(cells[0].VersusNote, "its baseline platform=native has no account") {
		t.Fatalf("cells %+v", cells)
	}
}
