package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxbench/boxbench/calibration"
	"github.com/boxbench/boxbench/internal/hostenv"
	"github.com/boxbench/boxbench/report"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/stats"
)

// hostPrecision is what decides how small a difference this host can resolve
// (docs/precision.md): the wake-up costs, the cpus, the steal and load of a short look, and
// the last calibration kept under the work root.
type hostPrecision struct {
	env       map[string]string
	wake      hostenv.WakeupCost
	wakeup    string // wake.Describe, or why it failed
	busy      float64
	steal     float64
	looked    bool // busy and steal were read
	cal       *calibration.Stored
	calErr    error
	otherHost bool // the calibration was taken on another host
}

// lookAtHost measures the wake-up costs and watches /proc/stat for one second.
func lookAtHost(workRoot string) hostPrecision {
	h := hostPrecision{env: hostenv.Capture()}
	var err error
	if h.wake, err = hostenv.MeasureWakeup(2000); err != nil {
		h.wakeup = "probe failed: " + err.Error()
	} else {
		h.wakeup = h.wake.Describe()
	}
	if a, err := hostenv.ReadLoad("/proc"); err == nil {
		time.Sleep(time.Second)
		if b, err := hostenv.ReadLoad("/proc"); err == nil && b.CPUTotal > a.CPUTotal {
			dt := b.CPUTotal - a.CPUTotal
			h.busy, h.steal, h.looked = (b.CPUBusy-a.CPUBusy)/dt, (b.CPUSteal-a.CPUSteal)/dt, true
		}
	}
	h.cal, h.calErr = calibration.Load(workRoot)
	h.otherHost = h.cal != nil && !h.cal.SameHost(h.env)
	return h
}

// lines are the host facts, one a line.
func (h hostPrecision) lines() []string {
	out := []string{
		"cpus: " + h.env["num_cpu"] + " online (" + h.env["cpus_online"] + "), " + h.env["cpu_model"],
		"wake-ups: " + h.wakeup,
	}
	if h.looked {
		out = append(out, fmt.Sprintf("load over 1 s: %.1f %% of all cpus busy, %.1f %% stolen by the hypervisor "+
			"(a busy or stolen host widens every interval)", 100*h.busy, 100*h.steal))
	}
	switch {
	case h.calErr != nil:
		out = append(out, "last calibration: unreadable: "+h.calErr.Error())
	case h.cal == nil:
		out = append(out, "last calibration: none kept; run examples/calibrate.yaml (boxbench run keeps its calibration) to measure this host's noise floor")
	default:
		c := h.cal
		design := "randomized"
		if c.Duet {
			design = "duet"
		}
		var fl []string
		for _, f := range c.Floors {
			fl = append(fl, fmt.Sprintf("±%.1f %% unpaired, ±%.1f %% paired at n = %d (%d A/A tests)", f.Unpaired, f.Paired, f.N, f.Tests))
		}
		where := "this host"
		if h.otherHost {
			where = "another host (" + c.Host["cpu_model"] + ", " + c.Host["num_cpu"] + " cpus): not a forecast for this one"
		}
		if c.DBMS != "" {
			design = c.DBMS + " " + c.Workload + ", " + design
		}
		out = append(out, fmt.Sprintf("last calibration: %s, %s, %s, on %s: A/A noise floor (95 %% CI half-width of the ratio) %s",
			c.Experiment, c.CreatedAt, design, where, strings.Join(fl, "; ")))
	}
	return out
}

// forecast says what the spec can resolve here, from the last calibration of this host: the
// detectable effect at its planned runs per cell, and the runs its targetEffect needs. It
// uses the floor at the calibration's largest sample size (the most A/A data behind it), paired
// under the spec's pairing rounds or duets (the report's verdict is then the paired one),
// unpaired otherwise.
func (h hostPrecision) forecast(e *spec.Experiment) []string {
	var out []string
	if w, p := h.wake, e.Placement; p.Client != "" && p.Server != "" && e.Order != "duet" &&
		w.CrossCPU.Wall > 4*w.SameCPU.Wall && w.SameCPU.Wall > 0 {
		out = append(out, fmt.Sprintf("this spec's client (cpus %s) and server (cpus %s) are on different cpus: every request pays "+
			"the cross-cpu wake-up, %.0f µs wall here against %.0f µs on one cpu", p.Client, p.Server,
			float64(w.CrossCPU.Wall.Nanoseconds())/1e3, float64(w.SameCPU.Wall.Nanoseconds())/1e3))
	}
	if h.cal == nil || h.otherHost || len(h.cal.Floors) == 0 {
		return append(out, "no forecast for this spec: no calibration of this host is kept")
	}
	paired := e.Pairing == "rounds" || e.Pairing == "duets"
	f := h.cal.Floors[len(h.cal.Floors)-1]
	half, design := f.Unpaired, "unpaired"
	if paired {
		half, design = f.Paired, "paired by "+strings.TrimSuffix(e.Pairing, "s")
	}
	spread, ok := stats.Spread(half, f.N, paired)
	if !ok {
		return append(out, "no forecast for this spec: the calibration's floor is not usable")
	}
	if (e.Order == "duet") != h.cal.Duet {
		out = append(out, "the calibration ran under another order than this spec: its noise may not be this design's")
	}
	if c := h.cal; c.DBMS != "" && (c.DBMS != e.DBMS || c.Workload != e.Workload.Type) {
		out = append(out, fmt.Sprintf("the calibration measured %s (%s), this spec runs %s (%s): its noise may not be this spec's "+
			"(calibrate with this spec's database and workload: examples/calibrate.yaml)", c.DBMS, c.Workload, e.DBMS, e.Workload.Type))
	}
	n := e.Repetitions.Min
	out = append(out, fmt.Sprintf("at %d runs per cell (%s, from the floor at n = %d): detectable effect ≈ %.1f %% (α = 0.05, 80 %% power)",
		n, design, f.N, stats.DetectableAt(spread, n, paired, stats.DefaultAlpha, stats.DefaultPower)))
	if t := float64(e.Repetitions.TargetEffect) * 100; t > 0 {
		if need, ok := stats.RunsFor(spread, t, paired, stats.DefaultAlpha, stats.DefaultPower, stats.MaxForecastRuns); ok {
			out = append(out, fmt.Sprintf("targetEffect %g %% needs ≈ %d runs per cell", t, need))
		} else {
			out = append(out, fmt.Sprintf("targetEffect %g %% is out of reach here: %d runs per cell would detect %.1f %%",
				t, stats.MaxForecastRuns, stats.DetectableAt(spread, stats.MaxForecastRuns, paired, stats.DefaultAlpha, stats.DefaultPower)))
		}
	}
	return out
}

// writePrecision prints the host's precision facts and, for a spec, the forecast.
func writePrecision(w io.Writer, h hostPrecision, e *spec.Experiment) {
	fmt.Fprintln(w, "\nprecision on this host (docs/precision.md):")
	for _, l := range h.lines() {
		fmt.Fprintln(w, "  "+l)
	}
	if e != nil {
		for _, l := range h.forecast(e) {
			fmt.Fprintln(w, "  "+l)
		}
	}
}

// keepCalibration keeps the calibration of the experiment a run just measured under the work
// root as this host's last, for plan and doctor, with the results file and experiment it came
// from; only `run` calls it (no reading command writes host state: a report of results from
// elsewhere must not become this host's forecast), and only when the experiment's recorded
// host is this one. Failing to keep it is said, not fatal.
func (a *app) keepCalibration(r *report.Report, resultsFile string) {
	s, ok := r.Stored()
	if !ok || !s.SameHost(hostenv.Capture()) {
		return
	}
	if abs, err := filepath.Abs(resultsFile); err == nil {
		resultsFile = abs
	}
	s.Results = resultsFile
	if err := calibration.Save(a.workRoot, s); err != nil {
		fmt.Fprintf(a.stderr, "keeping the calibration for plan and doctor: %v\n", err)
		return
	}
	fmt.Fprintf(a.stderr, "calibration kept as this host's last: %s\n", filepath.Join(a.workRoot, calibration.File))
}
