package spec

import (
	"time"
)

func (e *Experiment) applyDefaults() {
	e.workloadDefaults(&e.Workload, "workload")
	for name, w := range e.Workloads {
		if w == nil {
			w = &Workload{}
			e.Workloads[name] = w
		}
		e.workloadDefaults(w, "workloads."+name)
	}
	if e.Dataset.FieldCount == 0 {
		e.Dataset.FieldCount = 10
	}
	if e.Dataset.FieldLength == 0 {
		e.Dataset.FieldLength = 100
	}
	if e.Repetitions.Min == 0 && e.Repetitions.Max == 0 {
		e.Repetitions = Repetitions{Min: 3, Max: 3}
	}
	if e.Order == "" {
		e.Order = "randomized"
	}
	if e.Pairing == "" {
		e.Pairing = DefaultPairing(e.Order)
	}
	if e.Telemetry.Interval == 0 {
		e.Telemetry.Interval = Duration(time.Second)
	}
	if e.Timeouts.Provision == 0 {
		e.Timeouts.Provision = Duration(5 * time.Minute)
	}
	if e.Timeouts.Load == 0 {
		e.Timeouts.Load = Duration(60 * time.Minute)
	}
	if _, set := e.lines["quietStart.timeout"]; !set {
		e.QuietStart.Timeout = Duration(DefaultQuietTimeout)
	}
	if _, set := e.lines["quietStart.cpuBusy"]; !set {
		e.QuietStart.CPUBusy = 0.10
	}
	if _, set := e.lines["quietStart.diskBusy"]; !set {
		e.QuietStart.DiskBusy = 0.10
	}
	if e.QuietStart.Window == 0 {
		e.QuietStart.Window = Duration(time.Second)
	}
	if e.SteadyState == "" {
		e.SteadyState = "mser"
	}
	if e.Cache == "" {
		e.Cache = "warm"
	}
	if len(e.Baseline) == 0 {
		e.Baseline = e.defaultBaseline()
	}
}

func (e *Experiment) workloadDefaults(w *Workload, path string) {
	if w.Type == "" {
		w.Type = e.vocab.DefaultType()
	}
	if _, set := e.lines[path+".threads"]; !set {
		w.Threads = 8 // an explicit 0 stays, and is reported
		if n := e.vocab.workloadKind(w.Type).Threads; n > 0 {
			w.Threads = n
		}
	}
	if w.Interval == 0 {
		w.Interval = Duration(time.Second)
	}
}

func (e *Experiment) defaultBaseline() map[string]string {
	for _, d := range append(append([]Dim{}, e.Matrix.Dims...), e.Matrix.Zip...) {
		if b := e.vocab.Baseline; d.Key == "platform" && b != "" && contains(d.Values, b) {
			return map[string]string{"platform": b}
		}
	}
	for _, d := range e.Matrix.Dims {
		if len(d.Values) > 0 {
			return map[string]string{d.Key: d.Values[0]}
		}
	}
	return nil
}
