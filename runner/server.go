package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
// warm-up ends) and at its end, on every node of a cluster. It never fails a run: what it
// cannot read is recorded.
type serverWatch struct {
	done    chan struct{}
	cancel  context.CancelFunc
	targets []serverTarget
	limit   time.Duration
}

// serverTarget is one server the watch reads: the box itself, or one node of a cluster.
type serverTarget struct {
	node   string // "" for a single server, else the node's name
	access dbms.ServerAccess
	watch  dbms.ServerWatch
	err    error
}

// serverOutcome is what the window's readings gave (ran: there was an Observer and the
// workload completed, so both readings were tried): one window per server, in node order.
type serverOutcome struct {
	ran   bool
	nodes []nodeWindow
}

// nodeWindow is one server's window, or why it could not be read.
type nodeWindow struct {
	node string // "" for a single server
	win  dbms.ServerWindow
	err  error
}

// watchServer starts the reading at the end of warm-up, on a goroutine of its own (the
// workload is running then); nil when d reports nothing of its own. The reading is taken when
// measuring is closed (the signal of a workload whose Traits say NotifiesMeasuring), else
// warmup after now (the workload starts right after this call; its connecting, if slow, then
// shifts the reading into the warm-up, and server_window_seconds shows by how much). A box of several
// (platform.Traits.Nodes) has every node read, at once.
func watchServer(ctx context.Context, d dbms.DBMS, box platform.Box, warmup time.Duration, measuring <-chan struct{}) *serverWatch {
	o := dbms.ObserverOf(d)
	if o == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &serverWatch{done: make(chan struct{}), cancel: cancel, limit: serverReadTimeout}
	if box.Traits().Emulated {
		w.limit = serverReadTimeoutEmulated
	}
	access := func(b platform.Box) dbms.ServerAccess {
		return dbms.ServerAccess{Endpoint: b.Endpoint(), Credentials: d.Client(), Exec: b.Exec}
	}
	if nodes := platform.NodesOf(box); len(nodes) > 0 {
		for _, n := range nodes {
			w.targets = append(w.targets, serverTarget{node: n.Name, access: access(n.Box)})
		}
	} else {
		w.targets = []serverTarget{{access: access(box)}}
	}
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
			for i := range w.targets {
				w.targets[i].err = ctx.Err()
			}
			return
		}
		rctx, cancel := context.WithTimeout(ctx, w.limit)
		defer cancel()
		w.each(func(_ int, t *serverTarget) { t.watch, t.err = o.Watch(rctx, t.access) })
	}()
	return w
}

// each runs f on every target at once and waits for all.
func (w *serverWatch) each(f func(int, *serverTarget)) {
	var wg sync.WaitGroup
	for i := range w.targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i, &w.targets[i])
		}()
	}
	wg.Wait()
}

// abort stops a reading that has not started (a failed workload: the box may be torn down
// next) and waits for one under way.
func (w *serverWatch) abort() {
	if w != nil {
		w.cancel()
		<-w.done
	}
}

// end waits for the start readings and takes the end ones.
func (w *serverWatch) end(ctx context.Context) []nodeWindow {
	defer w.cancel()
	<-w.done
	rctx, cancel := context.WithTimeout(ctx, w.limit)
	defer cancel()
	out := make([]nodeWindow, len(w.targets))
	w.each(func(i int, t *serverTarget) {
		out[i].node = t.node
		if t.err != nil {
			out[i].err = fmt.Errorf("at the start of the window: %w", t.err)
			return
		}
		win, err := t.watch.End(rctx)
		if err != nil {
			out[i].err = fmt.Errorf("at the end of the window: %w", err)
			return
		}
		out[i].win = win
	})
	return out
}

// MetricServerWindow is the time between the two readings of the server's counters, on the
// server's clock: the window its server_… metrics cover.
const MetricServerWindow = "server_window_seconds"

// serverResult stores each window's server_… metrics in res (a cluster's first node under the
// plain names, every other node's under nodeMetric's), what is missing in facts, and each
// server that could not be read as one warning naming it.
func serverResult(o serverOutcome, res *workload.Result, facts map[string]string) []results.Warning {
	if !o.ran || res == nil {
		return nil
	}
	var failed, missing []string
	for i, n := range o.nodes {
		label := ""
		if n.node != "" {
			label = "node " + n.node + ": "
		}
		if n.err != nil {
			failed = append(failed, label+n.err.Error())
			continue
		}
		if res.Metrics == nil {
			res.Metrics = map[string]float64{}
		}
		for k, v := range n.win.Metrics {
			res.Metrics[nodeMetric(k, i, n.node)] = v
		}
		if n.win.Span > 0 {
			res.Metrics[nodeMetric(MetricServerWindow, i, n.node)] = n.win.Span.Seconds()
		}
		for _, m := range n.win.Missing {
			missing = append(missing, label+m)
		}
	}
	if len(missing) > 0 {
		facts["server_metrics_missing"] = strings.Join(missing, "; ")
	}
	if len(failed) == 0 {
		return nil
	}
	return []results.Warning{{Code: CodeServerCounters, Severity: "info",
		Message: "the database's own counters (garbage collection, compactions, dropped requests …) could not be read, " +
			"so the checks that rest on them were not made; the run's numbers stand: " + strings.Join(failed, "; ")}}
}

// nodeMetric names server metric name (server_…) of node i of a cluster named node: the first
// node's, like a single server's, is name itself; every other node's is server_<node>_… (a
// node's name is n1 … n9, which no metric's own name starts with).
func nodeMetric(name string, i int, node string) string {
	if i == 0 {
		return name
	}
	return "server_" + node + "_" + strings.TrimPrefix(name, "server_")
}

// serverMetrics picks the server_… metrics of node i named node out of a run's metrics, under
// their plain names (nodeMetric's inverse); nil when there are none.
func serverMetrics(metrics map[string]float64, i int, node string) map[string]float64 {
	var out map[string]float64
	for k, v := range metrics {
		rest, ok := strings.CutPrefix(k, "server_")
		if !ok {
			continue
		}
		if i > 0 {
			if rest, ok = strings.CutPrefix(rest, node+"_"); !ok {
				continue
			}
		} else if otherNode(rest) {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		out["server_"+rest] = v
	}
	return out
}

// otherNode says rest (a server metric's name after "server_") is another node's: it starts
// with a node's name, n followed by digits, and "_".
func otherNode(rest string) bool {
	name, _, ok := strings.Cut(rest, "_")
	if !ok || len(name) < 2 || name[0] != 'n' {
		return false
	}
	return strings.Trim(name[1:], "0123456789") == ""
}
