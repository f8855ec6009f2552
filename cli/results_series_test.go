package cli

import (
	"fmt"

	"testing"
	"time"

	"github.com/boxbench/boxbench/results"
)

// TestAlignSeries: db, host and client samples taken a few ms apart in the same interval land in
// one row (issue 19: one column per source timestamp, most cells "-").
func TestAlignSeries(t *testing.T) {
	var pts []results.Point
	for i := 1; i <= 3; i++ {
		end := time.Duration(i) * time.Second
		pts = append(pts,
			results.Point{Source: "db", Metric: "cpu_seconds_per_second", T: end + 2*time.Millisecond, Value: float64(i)},
			results.Point{Source: "host", Metric: "load1", T: end + 7*time.Millisecond, Value: 10 * float64(i)},
			results.Point{Source: "client", Metric: "cpu_user_seconds_per_second", T: end - 3*time.Millisecond, Value: 100 * float64(i)},
			results.Point{Source: "db", Metric: "disk_read_bytes_per_second", Label: "vda", T: end + 4*time.Millisecond, Value: 0})
	}
	names, times, rows := alignSeries(pts)
	if fmt.Sprint(times) != "[1000 2000 3000]" {
		t.Fatalf("times %v, want one row per interval", times)
	}
	if len(names) != 4 {
		t.Errorf("names %v", names)
	}
	for i, tm := range times {
		if len(rows[tm]) != 4 || rows[tm]["host.load1"] != 10*float64(i+1) || rows[tm]["db.disk_read_bytes_per_second{vda}"] != 0 {
			t.Errorf("row %d: %v", tm, rows[tm])
		}
	}
}
