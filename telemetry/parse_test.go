package telemetry

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDerive(t *testing.T) {
	prev := reading{
		{metric: "cpu_usage_seconds_total"}:              10,
		{metric: "cpu_throttled_periods_total"}:          100,
		{metric: "io_read_bytes_total"}:                  5000,
		{metric: "net_receive_bytes_total", label: "lo"}: 1000,
		{metric: "memory_oom_kills_total"}:               3, // group recreated: goes back to 0
		{metric: "memory_usage_bytes"}:                   1,
	}
	cur := reading{
		{metric: "cpu_usage_seconds_total"}:              11,
		{metric: "cpu_throttled_periods_total"}:          104,
		{metric: "net_receive_bytes_total", label: "lo"}: 3000,
		{metric: "memory_oom_kills_total"}:               0,
		{metric: "memory_usage_bytes"}:                   42,
		{metric: "cpu_periods_total"}:                    7, // not in prev: no sample
	}
	got := derive("db", prev, 2*time.Second, cur, 4*time.Second)
	sortSamples(got)
	want := []Sample{
		{T: 4 * time.Second, Source: "db", Metric: "cpu_throttled_periods_per_interval", Value: 4},
		{T: 4 * time.Second, Source: "db", Metric: "cpu_usage_seconds_per_second", Value: 0.5},
		{T: 4 * time.Second, Source: "db", Metric: "memory_usage_bytes", Value: 42},
		{T: 4 * time.Second, Source: "db", Metric: "net_receive_bytes_per_second", Label: "lo", Value: 1000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("derive:\n got %+v\nwant %+v", got, want)
	}
	// The baseline reading gives gauges only.
	first := derive("db", nil, 0, cur, time.Second)
	if len(first) != 1 || first[0].Metric != "memory_usage_bytes" {
		t.Errorf("first reading gave %+v, want only the gauge", first)
	}
}

func TestParsePressure(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]uint64
		bad      bool
	}{
		// Captured from this host's /proc/pressure/cpu (kernel 6.18).
		{name: "some and full", in: "some avg10=1.27 avg60=3.53 avg300=2.34 total=10965081\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			want: map[string]uint64{"some": 10965081, "full": 0}},
		// Kernels before 5.13 print no "full" line for cpu: full stays absent.
		{name: "some only", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n", want: map[string]uint64{"some": 42}},
		{name: "garbage", in: "sum avg10=0 total=1\n", bad: true},
		{name: "no total", in: "some avg10=0.00\n", bad: true},
	} {
		got, err := parsePressure(strings.NewReader(tc.in))
		if (err != nil) != tc.bad {
			t.Errorf("%s: err %v, want error %v", tc.name, err, tc.bad)
			continue
		}
		if !tc.bad && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseIOStat(t *testing.T) {
	// The example line from the kernel's Documentation/admin-guide/cgroup-v2.rst (io.stat),
	// doubled for two devices. Not a captured file: this host has no v2 io controller.
	in := "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n" +
		"8:0 rbytes=90430464 wbytes=299008000 rios=8950 wios=1252 dbytes=50331648 dios=3021\n"
	got, err := parseIOStat(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"rbytes": 91889664, "wbytes": 613781504, "rios": 9142, "wios": 1605, "dbytes": 50331648, "dios": 3021}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseIOStat(strings.NewReader("8:0 rbytes\n")); err == nil {
		t.Error("malformed io.stat: no error")
	}
	empty, err := parseIOStat(strings.NewReader(""))
	if err != nil || len(empty) != 0 {
		t.Errorf("empty io.stat (controller on, no I/O yet): %v, %v", empty, err)
	}
}

func TestParseFlatKeyed(t *testing.T) {
	// The captured v2 cpu.stat of the fixture's container group.
	b, err := os.ReadFile(filepath.Join(fixtureDir, "t0", "cgroup", "unified", readMeta(t, filepath.Join(fixtureDir, "meta.env"))["CGROUP_PATH"], "cpu.stat"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseFlatKeyed(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"usage_usec", "user_usec", "system_usec"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s missing from %v", k, got)
		}
	}
	if _, ok := got["nr_throttled"]; ok {
		t.Error("nr_throttled present in a group without the cpu controller")
	}
	if _, err := parseFlatKeyed(strings.NewReader("usage_usec x\n")); err == nil {
		t.Error("bad value: no error")
	}
}

func TestBlkioHasDevices(t *testing.T) {
	// "Total 0" alone is what every v1 group showed on this host before blk-throttle was
	// activated on the disk's queue, although it had done I/O.
	for in, want := range map[string]bool{
		"Total 0\n": false,
		"254:0 Read 4096\n254:0 Write 0\n254:0 Total 4096\nTotal 4096\n": true,
	} {
		got, err := blkioHasDevices(strings.NewReader(in))
		if err != nil || got != want {
			t.Errorf("%q: got %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestSnapshotSince(t *testing.T) {
	a := Snapshot{Values: map[string]float64{"cpu_throttled_periods_total": 10, "memory_usage_bytes": 5, "io_read_bytes_total": 9}}
	b := Snapshot{Values: map[string]float64{"cpu_throttled_periods_total": 25, "memory_usage_bytes": 7, "io_read_bytes_total": 3, "cpu_periods_total": 4}}
	got := b.Since(a)
	want := map[string]float64{"cpu_throttled_periods_total": 15}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Since = %v, want %v", got, want)
	}
}

func TestTargetValidation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		targets []Target
	}{
		{"none", nil},
		{"empty source", []Target{{Host: true}}},
		{"nothing to sample", []Target{{Source: "db"}}},
		{"duplicate", []Target{{Source: "h", Host: true}, {Source: "h", Host: true}}},
		{"missing process", []Target{{Source: "client", PID: 1 << 30}}},
		{"missing dir", []Target{{Source: "db", DataDir: "/no/such/dir"}}},
	} {
		if _, err := New(tc.targets, 0, testClock(), nil); err == nil {
			t.Errorf("%s: New accepted %+v", tc.name, tc.targets)
		}
	}
}
