package databases

import (
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/check"
	"github.com/boxbench/boxbench/dbms"
)

// TestServerChecks: the databases' rules on their servers' own counters (dbms.Traits.WindowRules),
// applied by check, fire on amounts that matter, say the numbers, and say nothing when a metric
// is missing or below its threshold. Every database's rules are given at once: each reads
// metrics only its own server reports.
func TestServerChecks(t *testing.T) {
	var rules []dbms.WindowRule
	for _, d := range DBMSs() {
		rules = append(rules, d.Traits().WindowRules...)
	}
	read := []check.OpCount{{Op: "read", Count: 100000, P99: 20 * time.Millisecond}, {Op: "update", Count: 100000, P99: 150 * time.Millisecond}}
	for _, tc := range []struct {
		name string
		f    check.Facts
		want []string // "code/severity"
		says []string
	}{
		{name: "no server metrics", f: check.Facts{Ops: read, Wall: 10 * time.Second}},
		{name: "quiet server", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_gc_pauses_total": 3, "server_gc_pause_seconds_total": 0.03, "server_gc_pause_max_seconds": 0.012,
			"server_compactions_completed_total": 0, "server_compacted_bytes_total": 0, "server_compactions_active_max": 0,
			"server_dropped_messages_total": 0, "server_threadpool_blocked_total": 0}}},

		{name: "gc share of the window", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_gc_pauses_total": 40, "server_gc_pause_seconds_total": 0.5, "server_gc_pause_max_seconds": 0.015}},
			want: []string{"jvm_gc_pauses/warning"}, says: []string{"paused 40 times", "0.500 s in all", "5.0 %", "2.0 %"}},
		{name: "gc share of the server's own window", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_gc_pauses_total": 10, "server_gc_pause_seconds_total": 0.15, "server_gc_pause_max_seconds": 0.015,
			"server_window_seconds": 5}},
			want: []string{"jvm_gc_pauses/warning"}, says: []string{"3.0 % of the 5.0 s window"}},
		{name: "gc share but tiny in absolute terms", f: check.Facts{Ops: read, Wall: time.Second, Server: map[string]float64{
			"server_gc_pauses_total": 4, "server_gc_pause_seconds_total": 0.05, "server_gc_pause_max_seconds": 0.005}}},
		{name: "one pause longer than a p99", f: check.Facts{Ops: read, Wall: 100 * time.Second, Server: map[string]float64{
			"server_gc_pauses_total": 2, "server_gc_pause_seconds_total": 0.2, "server_gc_pause_max_seconds": 0.18}},
			want: []string{"jvm_gc_pauses/warning"}, says: []string{"180.0 ms", "read p99 20.0 ms, update p99 150.0 ms", "beyond p99"}},
		{name: "pauses but none in the window", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_gc_pauses_total": 0, "server_gc_pause_seconds_total": 0, "server_gc_pause_max_seconds": 0}}},

		{name: "compaction rewrote data", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_compactions_completed_total": 2, "server_compacted_bytes_total": 48 << 20, "server_compactions_active_max": 0,
			"server_memtable_flushes_total": 3, "server_compactions_pending_max": 1}},
			want: []string{"compaction_during_window/warning"}, says: []string{"2 compactions completed, 48.0 MiB rewritten", "3 memtable flushes", "1 pending", "1.0 MiB"}},
		{name: "compaction under way", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_compactions_completed_total": 0, "server_compacted_bytes_total": 0, "server_compactions_active_max": 1}},
			want: []string{"compaction_during_window/warning"}, says: []string{"up to 1 under way"}},
		{name: "small system-table compaction", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_compactions_completed_total": 1, "server_compacted_bytes_total": 20 << 10, "server_compactions_active_max": 0}}},

		{name: "dropped and blocked", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_dropped_messages_total": 12, "server_threadpool_blocked_total": 7}},
			want: []string{"dropped_messages/warning", "thread_pool_blocked/warning"}, says: []string{"dropped 12 messages", "7 tasks were blocked"}},

		{name: "postgresql checkpoint", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_checkpoints_total": 1, "server_checkpoint_written_bytes_total": 96 << 20,
			"server_checkpoint_write_seconds_total": 4.5, "server_checkpoint_sync_seconds_total": 0.2}},
			want: []string{"checkpoint_during_window/warning"}, says: []string{"1 completed, 96.0 MiB written in 4.5 s", "0.2 s syncing"}},
		{name: "postgresql checkpoint that wrote little", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_checkpoints_total": 1, "server_checkpoint_written_bytes_total": 64 << 10}}},
		{name: "redis quiet", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_forks_total": 0, "server_background_save_active_max": 0, "server_evicted_keys_total": 0, "server_expired_keys_total": 5}}},
		{name: "redis rewrite and evictions", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_forks_total": 1, "server_background_save_active_max": 1, "server_evicted_keys_total": 1200}},
			want: []string{"background_save_during_window/warning", "keys_evicted/warning"},
			says: []string{"1 forks, one under way", "evicted 1200 keys"}},
		{name: "redis rewrite under way since before", f: check.Facts{Ops: read, Wall: 10 * time.Second, Server: map[string]float64{
			"server_forks_total": 0, "server_background_save_active_max": 1}},
			want: []string{"background_save_during_window/warning"}},

		// A cluster: every node's counters are checked and the warning names the node; the
		// first node's quiet counters do not hide the second's pauses.
		{name: "ring: pauses on one node", f: check.Facts{Ops: read, Wall: 10 * time.Second, Nodes: []check.Node{
			{Name: "n1", Source: "db", Server: map[string]float64{"server_gc_pauses_total": 1, "server_gc_pause_seconds_total": 0.01, "server_gc_pause_max_seconds": 0.01}},
			{Name: "n2", Source: "db-n2", Server: map[string]float64{"server_gc_pauses_total": 2, "server_gc_pause_seconds_total": 0.4, "server_gc_pause_max_seconds": 0.3}},
			{Name: "n3", Source: "db-n3"}}},
			want: []string{"jvm_gc_pauses/warning"}, says: []string{"node n2: the server's JVM paused 2 times", "the longest pause, 300.0 ms"}},
		{name: "ring: dropped on two nodes", f: check.Facts{Ops: read, Wall: 10 * time.Second, Nodes: []check.Node{
			{Name: "n1", Source: "db", Server: map[string]float64{"server_dropped_messages_total": 0}},
			{Name: "n2", Source: "db-n2", Server: map[string]float64{"server_dropped_messages_total": 12}},
			{Name: "n3", Source: "db-n3", Server: map[string]float64{"server_dropped_messages_total": 3}}}},
			want: []string{"dropped_messages/warning"}, says: []string{"node n2: the server dropped 12 messages", "; node n3: the server dropped 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var text strings.Builder
			tc.f.ServerRules = rules
			for _, w := range check.Evaluate(tc.f, check.Thresholds{}) {
				got = append(got, w.Code+"/"+string(w.Severity))
				text.WriteString(w.Message + "\n")
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("warnings %v, want %v\n%s", got, tc.want, text.String())
			}
			for _, s := range tc.says {
				if !strings.Contains(text.String(), s) {
					t.Errorf("messages lack %q:\n%s", s, text.String())
				}
			}
		})
	}
}
