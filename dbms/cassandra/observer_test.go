package cassandra

import (
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
)

// The fixtures are two readings of boxbench's observer in a real Cassandra 5.0.5 node (native,
// 512 MiB heap, YCSB A at 4 threads), 24.6 s apart; one 493 ms G1 pause fell between them.
func readFixture(t *testing.T, name string) cassandraReading {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseCassandraStats(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCassandraWindow(t *testing.T) {
	start, end := readFixture(t, "cassandra-stats-start.txt"), readFixture(t, "cassandra-stats-end.txt")
	w := cassandraWindow(start, end)
	if len(w.Missing) > 0 {
		t.Errorf("missing: %v", w.Missing)
	}
	want := map[string]float64{
		"server_gc_pauses_total": 1, "server_gc_pause_seconds_total": 0.492, "server_gc_pause_max_seconds": 0.493,
		"server_heap_used_bytes": 180268184, "server_heap_max_bytes": 512 << 20,
		"server_compactions_completed_total": 0, "server_compacted_bytes_total": 0, "server_memtable_flushes_total": 0,
		"server_dropped_messages_total": 0, "server_threadpool_blocked_total": 0,
		"server_compactions_pending_max": 0, "server_compactions_active_max": 0, "server_threadpool_pending_max": 2,
	}
	for k, v := range want {
		if got, ok := w.Metrics[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if len(w.Metrics) != len(want) {
		t.Errorf("metrics %v, want exactly %v", w.Metrics, want)
	}
	if w.Span != 24594*time.Millisecond {
		t.Errorf("span %v, want 24.594s", w.Span)
	}
	// The pauses before the window (the node's start-up) are not its longest pause.
	w = cassandraWindow(start, start)
	if w.Metrics["server_gc_pause_max_seconds"] != 0 || w.Metrics["server_gc_pauses_total"] != 0 {
		t.Errorf("an empty window has pauses: %v", w.Metrics)
	}
}

// TestCassandraWindowMissing: a metric the node could not give, a restarted JVM and a counter
// that went down are recorded as missing, never as a number.
func TestCassandraWindowMissing(t *testing.T) {
	start := readFixture(t, "cassandra-stats-start.txt")
	b, _ := os.ReadFile("testdata/cassandra-stats-end.txt")
	text := strings.Replace(string(b), "dropped_messages_total 0\n",
		"missing dropped_messages_total no MBean org.apache.cassandra.metrics:type=DroppedMessage,scope=*,name=Dropped\n", 1)
	end, err := parseCassandraStats(text)
	if err != nil {
		t.Fatal(err)
	}
	w := cassandraWindow(start, end)
	if _, ok := w.Metrics["server_dropped_messages_total"]; ok {
		t.Errorf("a missing counter has a value: %v", w.Metrics)
	}
	if !strings.Contains(strings.Join(w.Missing, ";"), "server_dropped_messages_total: not reported at the end") {
		t.Errorf("missing = %v", w.Missing)
	}

	restarted, _ := parseCassandraStats(strings.Replace(string(b), "jvm_start_ms ", "jvm_start_ms 9", 1))
	if w := cassandraWindow(start, restarted); len(w.Metrics) != 0 || len(w.Missing) != 1 {
		t.Errorf("a restarted JVM gave %v, missing %v", w.Metrics, w.Missing)
	}

	down, _ := parseCassandraStats(strings.Replace(string(b), "gc_pauses_total 11", "gc_pauses_total 3", 1))
	w = cassandraWindow(start, down)
	if _, ok := w.Metrics["server_gc_pauses_total"]; ok || !strings.Contains(strings.Join(w.Missing, ";"), "went down") {
		t.Errorf("a counter that went down gave %v, missing %v", w.Metrics, w.Missing)
	}
}

func TestParseCassandraStatsRejects(t *testing.T) {
	for _, text := range []string{"", "hello 1\n", "boxbench_observer 2\ntime_ms 5\n", "boxbench_observer 1\n",
		"boxbench_observer 1\ntime_ms 5\npause x 3\n"} {
		if _, err := parseCassandraStats(text); err == nil {
			t.Errorf("%q parsed", text)
		}
	}
}

// TestReadCassandraStats runs the reading script with sh in a directory, answering the
// request the way the observer does (a fake at the process boundary: the box's Exec); a box
// without Exec and a failing Exec are errors.
func TestReadCassandraStats(t *testing.T) {
	dir := t.TempDir()
	fixture, _ := os.ReadFile("testdata/cassandra-stats-end.txt")
	exec := func(ctx context.Context, argv []string) ([]byte, error) {
		cmd := execCommand(ctx, argv)
		cmd.Dir = dir
		return cmd.Output()
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the observer: answer each request
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := os.Stat(dir + "/" + cassandraStatsFile + ".want"); err == nil {
				_ = os.WriteFile(dir+"/"+cassandraStatsFile, fixture, 0o600)
				_ = os.Remove(dir + "/" + cassandraStatsFile + ".want")
			}
		}
	}()
	r, err := readCassandraStats(context.Background(), exec)
	if err != nil {
		t.Fatal(err)
	}
	if r.values["gc_pauses_total"] != 11 {
		t.Errorf("reading %v", r.values)
	}
	if _, err := readCassandraStats(context.Background(), nil); err == nil {
		t.Error("no Exec: no error")
	}
	failing := func(context.Context, []string) ([]byte, error) { return nil, errors.New("exec failed") }
	if _, err := readCassandraStats(context.Background(), failing); err == nil || !strings.Contains(err.Error(), "exec failed") {
		t.Errorf("err = %v", err)
	}
}

// TestObserverOf: the observer is found through WithPassword; an idle box has none.
func TestObserverOf(t *testing.T) {
	if dbms.ObserverOf(dbms.WithPassword(Cassandra{}, "x")) == nil {
		t.Error("cassandra with a password has no observer")
	}
	if dbms.ObserverOf(dbms.Idle(Cassandra{})) != nil {
		t.Error("an idle box has an observer")
	}
}

func execCommand(ctx context.Context, argv []string) *osexec.Cmd {
	return osexec.CommandContext(ctx, argv[0], argv[1:]...)
}
