package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/workload/fio"
	"github.com/boxbench/boxbench/workload/stress"
	"github.com/boxbench/boxbench/workload/sysbench"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// vocab is the vocabulary the tests validate against (builtin's tests load the shipped examples
// against the real one).
var vocab = Vocabulary{
	DBMSs:    []string{"mariadb", "postgresql", "redis"},
	Baseline: "native",
	Platforms: map[string]PlatformWords{
		"native": {Storages: []string{"bind", "tmpfs", "blockdev"}, Networks: []string{"host", "unix"}},
		"docker": {Storages: []string{"overlay", "bind", "volume", "tmpfs", "blockdev"},
			Networks: []string{"host", "bridge-published", "bridge-direct"}},
	},
	Consistencies: map[string][]string{"cassandra": {"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE"}},
	// The built-in kinds as the table builtin/workloads describes them (which spec's tests
	// cannot import); each kind's own section, its package's.
	Workloads: []WorkloadKind{
		{Name: "ycsb", Measured: true, Records: true, Remote: true, Own: ycsb.Own(),
			Sweeps: []string{"workload.targetRate", "workload.proportions.read", "workload.requestDistribution", "dataset.records"}},
		{Name: "sysbench", Measured: true, Own: sysbench.Own(),
			Sweeps: []string{"workload.rate", "workload.tableSize", "dataset.records"}, WholeSeconds: true},
		{Name: "fio", Measured: true, Neighbour: true, Threads: 1, Own: fio.Own(), Sweeps: []string{"workload.job.iodepth"}},
		{Name: "stress", Neighbour: true, Own: stress.Own()},
	},
}

const good = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: q
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 8, duration: 20s, warmup: 5s}
dataset: {records: 1000}
limits: {cpus: 1, memory: 2GiB}
matrix:
  platform: [native, docker]
  storage: [bind, overlay]
repetitions: 3
`

func TestParseDefaults(t *testing.T) {
	e, err := Parse([]byte(good), "good.yaml", vocab)
	if err != nil {
		t.Fatal(err)
	}
	if e.Limits.Memory != 2<<30 || e.Workload.Duration.D() != 20*time.Second {
		t.Errorf("memory %d duration %s", e.Limits.Memory, e.Workload.Duration.D())
	}
	if e.Order != "randomized" || e.Baseline["platform"] != "native" || e.Dataset.FieldCount != 10 {
		t.Errorf("defaults: order %q baseline %v fieldCount %d", e.Order, e.Baseline, e.Dataset.FieldCount)
	}
	if e.Repetitions.Adaptive() || e.Repetitions.Min != 3 {
		t.Errorf("repetitions %+v", e.Repetitions)
	}
}

// TestProblems feeds the mistakes a new user makes and checks each is reported with its line
// and field, all at once.
func TestProblems(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(string) string
		want    []string // substrings, each expected in some problem
		wantAll int      // exact number of problems, 0 = don't care
	}{
		{"typo in field", r("threads: 8", "threds: 8"), []string{`line 5: workload.threds: unknown field "threds" (did you mean "threads"?)`}, 1},
		{"decimal unit", r("2GiB", "2GB"), []string{`line 7: "2GB": unit "GB" is ambiguous; boxbench takes binary units: did you mean 2GiB?`}, 1},
		{"negative duration", r("duration: 20s", "duration: -20s"), []string{`line 5: "-20s" is negative`}, 0},
		{"unknown dbms", r("dbms: redis", "dbms: mongodb"), []string{`line 4: dbms: "mongodb" is not valid (valid: mariadb, postgresql, redis)`}, 1},
		{"empty matrix", r("matrix:\n  platform: [native, docker]\n  storage: [bind, overlay]\n", "matrix: {}\n"), []string{"matrix: empty"}, 0},
		{"baseline matches nothing", func(s string) string { return s + "baseline: {platform: vm}\n" }, []string{`baseline: platform=vm is not in the matrix`}, 1},
		{"baseline on a key not varied", func(s string) string { return s + "baseline: {network: host}\n" }, []string{`baseline: "network" is not a key of this matrix`}, 1},
		{"matrix value typo", r("[bind, overlay]", "[bind, overlayfs]"), []string{`line 10: matrix.storage: "overlayfs" is not valid; did you mean "overlay"?`}, 1},
		{"wrong type", r("threads: 8", "threads: many"), []string{`line 5: "many" is text, but a whole number is expected here`}, 0},
		{"field of another workload type", r("warmup: 5s}", "warmup: 5s, tables: 4}"), []string{"workload.tables: applies to workload type sysbench only"}, 1},
		{"client policy typo", func(s string) string { return s + "placement: {clientPolicy: idel}\n" },
			[]string{`placement.clientPolicy: "idel" is not valid; did you mean "idle"? (valid: normal, idle)`}, 1},
		{"client policy in matrix and placement", func(s string) string {
			return strings.Replace(s, "matrix:\n", "matrix:\n  clientPolicy: [normal, idel]\n", 1) + "placement: {clientPolicy: idle}\n"
		}, []string{`placement.clientPolicy: the matrix varies clientPolicy`, `matrix.clientPolicy: "idel" is not valid; did you mean "idle"?`}, 2},
		{"consistency for another database", r("warmup: 5s}", "warmup: 5s, consistency: QUORUM}"),
			[]string{"workload.consistency: applies to dbms cassandra only, but this experiment runs redis"}, 1},
		{"consistency typo", r("warmup: 5s}", "warmup: 5s, consistency: QUORUMS}"),
			[]string{`workload.consistency: "QUORUMS" is not valid; did you mean "QUORUM"?`}, 2},
		{"several at once", func(s string) string {
			return strings.NewReplacer("threads: 8", "threads: 0", "2GiB", "2GB", "dbms: redis", "dbms: mongo").Replace(s)
		}, []string{"workload.threads: 0 is out of range", `"2GB"`, `"mongo"`}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.edit(good)), "x.yaml", vocab)
			se, ok := err.(*Error)
			if !ok {
				t.Fatalf("want *spec.Error, got %v", err)
			}
			text := se.Error()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			if tc.wantAll > 0 && len(se.Problems) != tc.wantAll {
				t.Errorf("%d problems, want %d:\n%s", len(se.Problems), tc.wantAll, text)
			}
		})
	}
}

func TestZipAndExclude(t *testing.T) {
	src := strings.Replace(good, "  storage: [bind, overlay]\n", "  zip: {storage: [bind, volume], network: [host]}\n  exclude: [{platform: native, storage: tmpfs}]\n", 1)
	_, err := Parse([]byte(src), "z.yaml", vocab)
	if err == nil || !strings.Contains(err.Error(), "zipped keys need lists of equal length") ||
		!strings.Contains(err.Error(), "storage=tmpfs matches nothing") {
		t.Errorf("got %v", err)
	}
}

// TestZipRepeats: zipped keys may repeat values (that is what lists comparable boxes), but a
// whole tuple may not appear twice; a plain key may not repeat a value.
func TestZipRepeats(t *testing.T) {
	ok := strings.Replace(good, "  platform: [native, docker]\n  storage: [bind, overlay]\n",
		"  zip: {platform: [native, docker, docker], storage: [bind, bind, overlay]}\n", 1)
	if _, err := Parse([]byte(ok), "z.yaml", vocab); err != nil {
		t.Errorf("zip with repeated values refused: %v", err)
	}
	twice := strings.Replace(ok, "storage: [bind, bind, overlay]", "storage: [bind, overlay, overlay]", 1)
	if _, err := Parse([]byte(twice), "z.yaml", vocab); err == nil || !strings.Contains(err.Error(), "entries 2 and 3 are the same") {
		t.Errorf("a repeated tuple: %v", err)
	}
	plain := strings.Replace(good, "storage: [bind, overlay]", "storage: [bind, bind]", 1)
	if _, err := Parse([]byte(plain), "z.yaml", vocab); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("a repeated plain value: %v", err)
	}
}

func TestAdaptiveRepetitions(t *testing.T) {
	e, err := Parse([]byte(strings.Replace(good, "repetitions: 3", "repetitions: {min: 3, max: 10, targetCIHalfWidth: 2%}", 1)), "a.yaml", vocab)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Repetitions.Adaptive() || e.Repetitions.TargetCIHalfWidth != 0.02 {
		t.Errorf("%+v", e.Repetitions)
	}
	_, err = Parse([]byte(strings.Replace(good, "repetitions: 3", "repetitions: {min: 1, max: 10}", 1)), "a.yaml", vocab)
	if err == nil || !strings.Contains(err.Error(), "need min 2") || !strings.Contains(err.Error(), "need a target") {
		t.Errorf("got %v", err)
	}
}

func TestNotYAML(t *testing.T) {
	_, err := Parse([]byte("a: [b"), "x.yaml", vocab)
	if err == nil || !strings.Contains(err.Error(), "not valid YAML") {
		t.Errorf("got %v", err)
	}
	_, err = Parse(nil, "x.yaml", vocab)
	if err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("got %v", err)
	}
}

func r(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}
