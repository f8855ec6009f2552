package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/boxbench/boxbench/stats"
)

// sweepResources are the resource columns of the sweep CSV, in order.
var sweepResources = []struct{ name, col string }{
	{ResServerCPU, "server_cpu"}, {ResServerQuota, "server_cpu_throttled"}, {ResHostCPU, "host_cpu"}, {ResOtherCPU, "other_cpu"}, {ResDisk, "disk"}, {ResSoftirq, "softirq"}, {ResClientCPU, "client_cpu"},
}

// WriteSweepCSV writes the sweeps section's CSV form sweep-csv (WriteCSVForm): one row per point of every sweep curve (tidy): the sweep key, the
// curve, the point's cell and value, n, throughput (ops/s) and latency p50/p99 corrected and
// service (µs) each as mean and 95 % CI bounds over the ok runs, every resource's share of its
// capacity (mean), and whether the point is the curve's saturation point or past it, with the
// bottleneck named on the saturation point's row. Missing values are empty.
func WriteSweepCSV(w io.Writer, r *Report) error { return WriteCSVForm(w, r, CSVSweep) }

func writeSweepCSV(w io.Writer, sweeps []*Sweep) error {
	cw := csv.NewWriter(w)
	head := []string{"key", "curve", "cell", "x", "n"}
	for _, m := range []string{"throughput_ops_per_second", "latency_p50_us", "latency_p99_us", "service_p50_us", "service_p99_us"} {
		head = append(head, m+"_mean", m+"_ci95_lo", m+"_ci95_hi")
	}
	for _, res := range sweepResources {
		head = append(head, res.col+"_share_mean")
	}
	head = append(head, "saturation", "bottleneck")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, sw := range sweeps {
		for _, cv := range sw.Curves {
			for i, p := range cv.Points {
				row := []string{sw.Key, cv.Label, p.Cell, num(p.X), strconv.Itoa(p.Throughput.N)}
				for _, s := range []stats.Summary{p.Throughput, p.P50, p.P99, p.ServiceP50, p.ServiceP99} {
					row = append(row, summaryCells(s)...)
				}
				for _, res := range sweepResources {
					v := ""
					for _, u := range p.Resources {
						if u.Name == res.name && u.Share.N > 0 {
							v = num(u.Share.Mean)
						}
					}
					row = append(row, v)
				}
				sat, neck := "", ""
				if s := cv.Saturation; s != nil {
					switch {
					case i == s.Index:
						sat, neck = "point", s.Bottleneck
					case i > s.Index:
						sat = "past"
					}
				}
				row = append(row, sat, neck)
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// summaryCells are a summary's mean and CI bounds, empty where absent.
func summaryCells(s stats.Summary) []string {
	if s.N == 0 {
		return []string{"", "", ""}
	}
	if !s.CI95.Valid {
		return []string{num(s.Mean), "", ""}
	}
	return []string{num(s.Mean), num(s.CI95.Lo), num(s.CI95.Hi)}
}
