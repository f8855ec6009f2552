package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/workload"
)

// serverReadTimeout bounds one reading of the database's own counters (dbms.Observer);
// emulated for a box whose CPU is emulated.
const (
	serverReadTimeout         = 15 * time.Second
	serverReadTimeoutEmulated = 60 * time.Second
)

// CodeServerCounters is the run warning for a database whose own counters could not be read.
const CodeServerCounters = "server_counters_unavailable"

// serverWatch reads the database's own counters at the start of the measured window (when the
// warm-up ends) and at its end. It never fails a run: what it cannot read is recorded.
type serverWatch struct {
	done   chan struct{}
	cancel context.CancelFunc
	watch  dbms.ServerWatch
	err    error
	limit  time.Duration
}

// serverOutcome is what the window's readings gave (ran: there was an Observer and the
// workload completed, so both readings were tried).
type serverOutcome struct {
	ran bool
	win dbms.ServerWindow
	err error
}

// watchServer starts the reading at the end of warm-up, on a goroutine of its own (the
// workload is running then); nil when d reports nothing of its own. The reading is taken when
// measuring is closed (a workload.MeasureNotifier's signal), else warmup after now (the
// workload starts right after this call; its connecting, if slow, then shifts the reading
// into the warm-up, and server_window_seconds shows by how much).
func watchServer(ctx context.Context, d dbms.DBMS, box platform.Box, warmup time.Duration, measuring <-chan struct{}) *serverWatch {
	o := dbms.ObserverOf(d)
	if o == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &serverWatch{done: make(chan struct{}), cancel: cancel, limit: serverReadTimeout}
	if box.Facts()[platform.FactEmulated] == "true" {
		w.limit = serverReadTimeoutEmulated
	}
	a := dbms.ServerAccess{Endpoint: box.Endpoint(), Credentials: d.Client(), Exec: box.Exec}
	go func() {
		defer close(w.done)
		start := measuring
		if start == nil {
			t := time.NewTimer(warmup)
			defer t.Stop()
			c := make(chan struct{})
			go func() {
				select {
				case <-t.C:
					close(c)
				case <-ctx.Done():
				}
			}()
			start = c
		}
		select {
		case <-start:
		case <-ctx.Done():
			w.err = ctx.Err()
			return
		}
		rctx, cancel := context.WithTimeout(ctx, w.limit)
		defer cancel()
		w.watch, w.err = o.Watch(rctx, a)
	}()
	return w
}

// abort stops a reading that has not started (a failed workload: the box may be torn down
// next) and waits for one under way.
func (w *serverWatch) abort() {
	if w != nil {
		w.cancel()
		<-w.done
	}
}

// end waits for the start reading and takes the end one.
func (w *serverWatch) end(ctx context.Context) (dbms.ServerWindow, error) {
	defer w.cancel()
	<-w.done
	if w.err != nil {
		return dbms.ServerWindow{}, fmt.Errorf("at the start of the window: %w", w.err)
	}
	rctx, cancel := context.WithTimeout(ctx, w.limit)
	defer cancel()
	win, err := w.watch.End(rctx)
	if err != nil {
		return dbms.ServerWindow{}, fmt.Errorf("at the end of the window: %w", err)
	}
	return win, nil
}

// MetricServerWindow is the time between the two readings of the server's counters, on the
// server's clock: the window its server_… metrics cover.
const MetricServerWindow = "server_window_seconds"

// serverResult stores a window's server_… metrics in res, what is missing in facts, and a
// failure as a warning.
func serverResult(o serverOutcome, res *workload.Result, facts map[string]string) []results.Warning {
	if !o.ran || res == nil {
		return nil
	}
	win, err := o.win, o.err
	if err != nil {
		return []results.Warning{{Code: CodeServerCounters, Severity: "info",
			Message: "the database's own counters (garbage collection, compactions, dropped requests …) could not be read, " +
				"so the checks that rest on them were not made; the run's numbers stand: " + err.Error()}}
	}
	if res.Metrics == nil {
		res.Metrics = map[string]float64{}
	}
	for k, v := range win.Metrics {
		res.Metrics[k] = v
	}
	if win.Span > 0 {
		res.Metrics[MetricServerWindow] = win.Span.Seconds()
	}
	if len(win.Missing) > 0 {
		facts["server_metrics_missing"] = strings.Join(win.Missing, "; ")
	}
	return nil
}
