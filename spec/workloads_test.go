package spec

import (
	"strings"
	"testing"
)

// TestWorkloadKindChecks: the checks of a kind's own fields run for the kinds that take them
// (the vocabulary's rows), each problem on its field, with the value and what is valid.
func TestWorkloadKindChecks(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"sysbench counts seconds", "type: ycsb, mix: read-heavy, threads: 8, duration: 20s, warmup: 5s",
			"type: sysbench, test: oltp_read_only, duration: 1500ms, warmup: 2s, interval: 1s",
			"line 5: workload.duration: 1.5s is not a whole number of seconds (sysbench counts in seconds)"},
		{"sysbench warm-up by intervals", "type: ycsb, mix: read-heavy, threads: 8, duration: 20s, warmup: 5s",
			"type: sysbench, test: oltp_read_only, duration: 20s, warmup: 3s, interval: 2s",
			"line 5: workload.warmup: 3s is not a multiple of the interval 2s"},
		{"custom mix", "mix: read-heavy", "mix: custom", "workload.proportions: mix custom needs proportions"},
		{"fio files", "type: ycsb, mix: read-heavy, threads: 8", "type: fio, job: randread-4k, size: 1TiB, threads: 4000",
			"workload.size: 4000 jobs × 1TiB is more than"},
		{"fio without a job", "type: ycsb, mix: read-heavy,", "type: fio,",
			"workload.job: missing: name a preset (randread-4k, randwrite-4k, seqwrite-64k, wal, fsync-none, fsync-low, fsync-high) or give a map of fio options"},
		{"a field of another kind", "mix: read-heavy,", "mix: read-heavy, test: oltp_insert, cpu: 2,",
			"line 5: workload.cpu: applies to workload type stress only, but this workload is ycsb"},
		{"stress without hogs", "storage: [bind, overlay]\n", "storage: [bind, overlay]\n  neighbour: [none, hog]\nneighbours: {hog: {workload: {type: stress, vmBytes: 1GiB}}}\n",
			"neighbours.hog.workload: a stress neighbour needs cpu: N (CPU hog workers) or vm: N (memory-bandwidth hog workers)"},
		{"a neighbour's fio without a job", "storage: [bind, overlay]\n", "storage: [bind, overlay]\n  neighbour: [none, io]\nneighbours: {io: {workload: {type: fio, mix: a}}}\n",
			"neighbours.io.workload.job: missing: name a preset (fsync-none, fsync-low, fsync-high, seqwrite-64k, randwrite-4k, randread-4k, wal)"},
		{"a neighbour's field of another kind", "storage: [bind, overlay]\n", "storage: [bind, overlay]\n  neighbour: [none, io]\nneighbours: {io: {workload: {type: fio, job: wal, mix: a}}}\n",
			"neighbours.io.workload.mix: applies to workload type ycsb only, but this neighbour runs fio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(good, tc.from, tc.to, 1)
			if src == good {
				t.Fatalf("%q is not in the spec", tc.from)
			}
			_, err := Parse([]byte(src), "k.yaml", vocab)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want %q in:\n%v", tc.want, err)
			}
		})
	}
}
