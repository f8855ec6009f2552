package dbms

import (
	"context"
	"fmt"
	"sort"

	"time"

	"github.com/boxbench/boxbench/driver"
)

// Observer is implemented by a database that can report its own counters for the measured
// window: what the server itself says it did (garbage collection, compactions, checkpoints,
// evictions, dropped requests), which the box's cgroup cannot show.
//
// Contract: the runner calls Watch once, when the measured window starts (warm-up over), and
// the returned ServerWatch's End once, when the window ends. Both talk to the running server
// through ServerAccess (its client protocol, or a command in the box); neither may change
// the server's state or take more than a few hundred milliseconds of its CPU. An error from
// either means "nothing known": the run records it as a warning and is not failed by it.
// Watch and End are called from one goroutine; Watch for different boxes may run at once.
type Observer interface {
	Watch(ctx context.Context, a ServerAccess) (ServerWatch, error)
}

// ServerWatch is an Observer's reading at the start of a window.
type ServerWatch interface {
	// End reads the counters again and returns what happened since Watch.
	End(ctx context.Context) (ServerWindow, error)
}

// counterWatch is the ServerWatch of an Observer whose window is the difference of two
// readings of the server's counters: one taken by WatchCounters at the start, one by End.
type counterWatch[R any] struct {
	a      ServerAccess
	read   func(context.Context, ServerAccess) (R, error)
	window func(start, end R) ServerWindow
	start  R
}

// WatchCounters is an Observer's Watch whose window is made of two readings: it takes the
// first with read; the ServerWatch's End takes the second and makes the window of both.
func WatchCounters[R any](ctx context.Context, a ServerAccess, read func(context.Context, ServerAccess) (R, error),
	window func(start, end R) ServerWindow) (ServerWatch, error) {
	r, err := read(ctx, a)
	if err != nil {
		return nil, err
	}
	return &counterWatch[R]{a: a, read: read, window: window, start: r}, nil
}

func (w *counterWatch[R]) End(ctx context.Context) (ServerWindow, error) {
	r, err := w.read(ctx, w.a)
	if err != nil {
		return ServerWindow{}, err
	}
	return w.window(w.start, r), nil
}

// ServerAccess is how an Observer reaches the server.
type ServerAccess struct {
	Endpoint    driver.Endpoint    // where boxbench's own client reaches it (may be unreachable from the host for a box whose client runs elsewhere)
	Credentials driver.Credentials // the run's client credentials
	// Exec runs argv in the box as root, in the data directory (platform.Box.Exec).
	Exec func(ctx context.Context, argv []string) ([]byte, error)
}

// ServerWindow is what the server reported about one window.
type ServerWindow struct {
	// Metrics are the run metrics, each named server_… with its unit (_total for a count over
	// the window, _seconds, _bytes), stored unrounded: counters as end minus start, levels as
	// said by each name's documentation (docs/databases.md, "What the server says").
	Metrics map[string]float64
	// Missing names each metric the server could not give, with why ("server_x: why").
	Missing []string
	// Span is the time between the two readings on the server's own clock (0 = unknown): the
	// window the metrics cover, which may differ from the workload's by the readings' latency.
	Span time.Duration
}

// ObserverOf returns d's Observer (Traits.Observer), or nil when d reports nothing of its
// own. An idle box has no server to ask.
func ObserverOf(d DBMS) Observer { return d.Traits().Observer }

// CounterWindow turns two readings of the same counters into a window: for each name in
// counters, end minus start; a name read at only one end is missing. A counter that went
// down (a server restarted between the readings) is missing too: its difference means nothing.
func CounterWindow(start, end map[string]float64, counters map[string]string, w *ServerWindow) {
	names := make([]string, 0, len(counters))
	for n := range counters {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		metric := counters[n]
		a, okA := start[n]
		b, okB := end[n]
		switch {
		case !okA:
			w.Missing = append(w.Missing, metric+": not reported at the start of the window")
		case !okB:
			w.Missing = append(w.Missing, metric+": not reported at the end of the window")
		case b < a:
			w.Missing = append(w.Missing, fmt.Sprintf("%s: the counter went down (%g to %g): the server restarted during the window", metric, a, b))
		default:
			w.Metrics[metric] = b - a
		}
	}
}
