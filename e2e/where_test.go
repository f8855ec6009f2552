package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestWhereTheTimeGoes runs Redis in Docker under runc and gVisor, behind a published port and
// on the bridge's address, under a CPU quota, and checks that each run's books name the
// mechanism that costs: the docker-proxy of the published port (and the soft interrupts of
// its extra hop), gVisor's Sentry and Gofer, the container's shim, the throttled time under
// the quota — and nothing that is not there (no proxy on the bridge's address, no Sentry
// under runc). Removing the accounting, or a platform's parts, fails it.
func TestWhereTheTimeGoes(t *testing.T) {
	parallel(t)
	testenv.NeedDocker(t)
	const quota = 0.2 // cpus
	e := newEnv(t, spec{Name: "where", Reps: "1", Limits: fmt.Sprintf("{cpus: %g, memory: 512MiB}", quota),
		Workload: "{type: ycsb, mix: read-heavy, threads: 4, duration: 3s, warmup: 1s}",
		Matrix:   "  platform: [docker]\n  runtime: [runc, runsc]\n  network: [bridge-published, bridge-direct]"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, got, text := e.runStored(ctx, t, 4)
	for _, r := range got.Runs {
		if r.Status != "ok" {
			t.Errorf("run %s: %s %s", r.ID, r.Status, r.Reason)
			continue
		}
		m := r.Result.Metrics
		for _, k := range []string{"cpu_ns_per_op.host.busy", "cpu_ns_per_op.client.generator", "cpu_ns_per_op.box.containerd-shim",
			"cpu_ns_per_op.kernel.interrupts", "cpu_ns_per_op.other.processes", "per_op.softirq_net_rx"} {
			if !hasKey(m, k) {
				t.Errorf("run %s: no %s", r.ID, k)
			}
		}
		if m["cpu_ns_per_op.database.user"]+m["cpu_ns_per_op.database.system"] <= 0 {
			t.Errorf("run %s: the database's own CPU is not accounted", r.ID)
		}
		// The quota is reached when the host leaves the server its quota: on a host busy with
		// other work (a CI run's) it may get less, and then is rightly not throttled.
		cores := 0.0
		if r.Throughput != nil {
			cores = (m["cpu_ns_per_op.database.user"] + m["cpu_ns_per_op.database.system"]) * *r.Throughput / 1e9
		}
		switch throttled := m["per_op.throttled_ns"]; {
		case throttled <= 0 && cores >= 0.9*quota:
			t.Errorf("run %s: a server at its %g-cpu quota (%.3f cpus) shows no throttled time (%v)", r.ID, quota, cores, throttled)
		case throttled <= 0:
			t.Logf("run %s: the host left the server %.3f cpus, under its %g-cpu quota: throttling not checked", r.ID, cores, quota)
		}
		if r.Facts["where_interrupts"] == "" {
			t.Errorf("run %s: no fact of what kernel.interrupts holds", r.ID)
		}
		published := strings.Contains(r.ID, "network=bridge-published")
		if got := m["cpu_ns_per_op.box.docker-proxy"] > 0; got != published {
			t.Errorf("run %s: docker-proxy accounted %v (%.0f ns/op), want %v", r.ID, got, m["cpu_ns_per_op.box.docker-proxy"], published)
		}
		gvisor := strings.Contains(r.ID, "runtime=runsc")
		if got := m["cpu_ns_per_op.box.runsc-sentry"] > 0; got != gvisor {
			t.Errorf("run %s: gVisor's Sentry accounted %v, want %v", r.ID, got, gvisor)
		}
		if hasKey(m, "cpu_ns_per_op.box.runsc-gofer") != gvisor {
			t.Errorf("run %s: gVisor's Gofer present %v, want %v", r.ID, !gvisor, gvisor)
		}
	}
	if t.Failed() {
		t.Logf("stored runs:\n%.4000s", text)
	}
}

// TestWhereTheJournal runs PostgreSQL's commits on a file system of its own (storage blockdev:
// ext4 on a loop device, with a journal), alone and beside an fsync-heavy neighbour whose data
// shares that file system (neighbours.<n>.storage: shared): the data device's journal commits
// per operation and its commit thread (kernel.jbd2) are in the books, and the shared
// neighbour's data directory is on the database's own file system.
func TestWhereTheJournal(t *testing.T) {
	parallel(t)
	testenv.NeedCommands(t, "postgres", "fio")
	e := newEnv(t, spec{Name: "where-journal", DBMS: "postgresql", Reps: "1",
		Workload: "{type: ycsb, mix: write-heavy, threads: 2, duration: 3s, warmup: 1s}",
		Matrix:   "  platform: [native]\n  storage: [blockdev]\n  neighbour: [none, fsync-shared]",
		Extra: "storageOptions: {blockdev: {size: 1GiB}}\nbaseline: {neighbour: none}\n" +
			"neighbours:\n  fsync-shared: {workload: {type: fio, job: fsync-high, size: 32MiB}, storage: shared}\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, got, text := e.runStored(ctx, t, 2)
	for _, r := range got.Runs {
		if r.Status != "ok" {
			t.Fatalf("run %s: %s %s\n%s", r.ID, r.Status, r.Reason, text)
		}
		m := r.Result.Metrics
		if m["per_op.journal_commits"] <= 0 || !hasKey(m, "cpu_ns_per_op.kernel.jbd2") {
			t.Errorf("run %s: the data device's journal is not in the books: commits/op %v, jbd2 present %v", r.ID,
				m["per_op.journal_commits"], hasKey(m, "cpu_ns_per_op.kernel.jbd2"))
		}
		if m["per_op.disk_flushes"] <= 0 {
			t.Errorf("run %s: commits reach the device without flushes (%v/op)", r.ID, m["per_op.disk_flushes"])
		}
		if !strings.Contains(r.ID, "neighbour=fsync-shared") {
			continue
		}
		db, nb := r.Facts["host_data_dir"], r.Facts["neighbour_fsync-shared_host_data_dir"]
		if db == "" || nb == "" || !strings.HasPrefix(nb, filepath.Dir(db)+"/") {
			t.Errorf("run %s: the shared neighbour's data %q is not on the database's file system (%q)", r.ID, nb, db)
		}
		if !hasKey(m, "cpu_ns_per_op.neighbour.fsync-shared") {
			t.Errorf("run %s: the neighbour's CPU is not in the books: %v", r.ID, m)
		}
	}
}

func hasKey(m map[string]float64, k string) bool {
	_, ok := m[k]
	return ok
}
