package spec

import (
	"strings"
	"testing"
)

// TestBoundsAndConversions holds issue 32's items 3, 5 and 6: every unbounded size, count, rate
// and cpu list, and every number that silently became something else, is refused when the
// spec is read, naming the field, the value and what is valid. docs/security.md refers here.
func TestBoundsAndConversions(t *testing.T) {
	const base = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: b
dbms: postgresql
workloads:
  y: {type: ycsb, mix: a, threads: 2, duration: 5s}
  s: {type: sysbench, test: oltp_read_only, threads: 1, duration: 5s}
neighbours:
  n1: {workload: {type: stress, cpu: 1}}
dataset: {records: 1000}
limits: {cpus: 1, memory: 1GiB}
matrix:
  workload: [y, s]
  platform: [native, docker]
  neighbour: [none, n1]
repetitions: 3
`
	if _, err := Parse([]byte(base), "b.yaml", vocab); err != nil {
		t.Fatalf("the base must be valid: %v", err)
	}
	add := func(s string) func(string) string { return func(b string) string { return b + s } }
	rep := func(old, new string) func(string) string {
		return func(b string) string { return strings.Replace(b, old, new, 1) }
	}
	v := vocab
	v.CPUs = []int{0, 1}
	for _, tc := range []struct {
		name string
		edit func(string) string
		want string
	}{
		// Item 3: cpu lists checked before expansion, against the host.
		{"cpuset beyond the host", rep("cpus: 1, memory", "cpuset: \"0-99999\", memory"), `limits.cpuset: "0-99999" names cpu 99999 (valid: below 4096)`},
		{"cpuset range backwards", rep("cpus: 1, memory", "cpuset: \"5-1\", memory"), `limits.cpuset: "5-1" is not a cpu list (a range runs low-high`},
		{"cpuset of 20 digits", rep("cpus: 1, memory", "cpuset: \"12345678901234567890\", memory"), `limits.cpuset: "12345678901234567890" is not a cpu list`},
		{"cpuset the host lacks", rep("cpus: 1, memory", "cpuset: \"3\", memory"), `limits.cpuset: "3" names cpu 3, which this host does not offer`},
		{"matrix cpuset the host lacks", rep("  neighbour: [none, n1]\n", "  neighbour: [none, n1]\n  cpuset: [\"1\", \"0-4095\"]\n"), `matrix.cpuset: "0-4095" names cpu 2-4095, which this host does not offer`},
		{"client list of wide ranges", add("placement: {client: \"" + strings.Repeat("0-4095,", 500) + "0\", server: \"1\"}\n"), `placement.client: "0-4095,0-4095,0-4095,0-4095,0-4095,0-409"… (3501 characters in all) names cpu 2-4095`},
		// Item 5: sizes and counts with an upper bound.
		{"loadThreads 2e9", rep("threads: 2, duration", "threads: 2, loadThreads: 2000000000, duration"), `workloads.y.loadThreads: 2000000000 is out of range (valid: 0 for the workload's threads, or 1 to 4096)`},
		{"loadBatch 2^31", rep("threads: 2, duration", "threads: 2, loadBatch: 2147483648, duration"), `workloads.y.loadBatch: 2147483648 is out of range`},
		{"record of a GiB", rep("dataset: {records: 1000}", "dataset: {records: 1000, fieldCount: 1000, fieldLength: 1048576}"), `dataset: fieldCount 1000 × fieldLength 1048576 = 1000MiB per record is too large (valid: at most 16MiB per record)`},
		{"a batch of large records", rep("dataset: {records: 1000}", "dataset: {records: 1000, fieldCount: 16, fieldLength: 1048576}"), `workloads.y.loadBatch: 100 records of 16MiB is 1600MiB per insert`},
		{"tmpfs of exabytes", add("storageOptions: {tmpfs: {size: 1000000TiB}}\n"), `storageOptions.tmpfs.size: 1000000TiB is out of range (valid: 0 for the default, up to 16TiB)`},
		{"blockdev of exabytes", add("storageOptions: {blockdev: {size: 1000000TiB}}\n"), `storageOptions.blockdev.size: 1000000TiB is out of range`},
		{"memory of exabytes", rep("memory: 1GiB", "memory: 8000000TiB"), `limits.memory: 8000000TiB is out of range`},
		{"records 1e15", rep("records: 1000", "records: 1000000000000000"), `dataset.records: 1000000000000000 is too large`},
		{"sysbench tables", rep("threads: 1, duration", "threads: 1, tables: 100000, duration"), `workloads.s.tables: 100000 is out of range`},
		{"sysbench tableSize", rep("threads: 1, duration", "threads: 1, tableSize: 3000000000, duration"), `workloads.s.tableSize: 3000000000 is out of range`},
		{"stress cpu 1e8", rep("cpu: 1", "cpu: 100000000"), `neighbours.n1.workload.cpu: 100000000 is out of range (valid: 0 to 4096 workers)`},
		{"stress vm -5", rep("cpu: 1", "cpu: 1, vm: -5"), `neighbours.n1.workload.vm: -5 is out of range`},
		// Item 6: numbers that became something else.
		{"cpus 1e-300", rep("cpus: 1,", "cpus: 1e-300,"), `limits.cpus: 1e-300 is below the smallest limit (valid: 0 or absent for no limit, or 0.01 to 4096 cpus)`},
		{"matrix cpus 1e-300", rep("  neighbour: [none, n1]\n", "  neighbour: [none, n1]\n  cpus: [\"1e-300\"]\n"), `matrix.cpus: "1e-300" is not a CPU count`},
		{"targetRate 1e-300", rep("threads: 2, duration", "threads: 2, targetRate: 1e-300, duration"), `workloads.y.targetRate: 1e-300 is out of range (valid: 0 for a closed loop, or 0.001 to 1e+09 operations/s)`},
		{"targetRate 1e308", rep("threads: 2, duration", "threads: 2, targetRate: 1e308, duration"), `workloads.y.targetRate: 1e+308 is out of range`},
		{"loadBatch -1", rep("threads: 2, duration", "threads: 2, loadBatch: -1, duration"), `workloads.y.loadBatch: -1 is out of range`},
		{"tables -1", rep("threads: 1, duration", "threads: 1, tables: -1, duration"), `workloads.s.tables: -1 is out of range`},
		{"typo in repetitions", rep("repetitions: 3", "repetitions: {min: 2, maxx: 5, targetEfect: 3%}"), `repetitions.maxx: unknown field "maxx" (did you mean "max"?)`},
		{"second typo in repetitions", rep("repetitions: 3", "repetitions: {min: 2, maxx: 5, targetEfect: 3%}"), `repetitions.targetEfect: unknown field "targetEfect" (did you mean "targetEffect"?)`},
		{"client pod without a kubernetes cell", add("client: {platform: kubernetes}\n"), `client.platform: kubernetes, but no cell runs on platform kubernetes`},
		{"binary description", add("description: !!binary G1syShtdMDtwd25lZAc=\n"), `description: explicit YAML tag "!!binary" is not supported`},
		{"duplicate key", add("limits: {cpus: 2}\n"), `line 17: limits: key "limits" is already defined at line 11 (valid: each key once)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			voc := v
			if strings.Contains(tc.name, "kubernetes") {
				voc.Platforms = map[string]PlatformWords{"native": v.Platforms["native"], "docker": v.Platforms["docker"], "kubernetes": {Storages: []string{"bind"}, Networks: []string{"host"}, Client: true}}
			}
			_, err := Parse([]byte(tc.edit(base)), "b.yaml", voc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want %q in:\n%v", tc.want, err)
			}
		})
	}
}

// TestSweepRateFloor: a sweep's open-loop rate below MinRate (1e-21 overflowed the schedule) is
// refused like any value out of range.
func TestSweepRateFloor(t *testing.T) {
	if err := checkSweepValue("workload.targetRate", "0.000000000000000000001"); err == nil {
		t.Error("a rate of 1e-21 accepted")
	}
	if err := checkSweepValue("workload.targetRate", "0.001"); err != nil {
		t.Errorf("the floor refused: %v", err)
	}
}
