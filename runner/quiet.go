package runner

import (
	"context"
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/hostenv"
	"github.com/boxbench/boxbench/results"
)

// The quiet start's metric and warning codes (docs/precision.md).
const (
	MetricQuietWait   = results.MetricQuietWait
	WarnHostNotQuiet  = "host_not_quiet"
	WarnPageCacheKept = "page_cache_not_dropped"
	dropCachesFile    = "/proc/sys/vm/drop_caches"
	cacheCold         = "cold"
)

// prepareHost runs just before a run's workload: it drops the page cache when the spec asks
// for cold data (after a sync, so dirty pages can go), then waits for a quiet host. What it
// did goes into the run's facts, metrics and warnings, never silently.
func (r *Runner) prepareHost(ctx context.Context, rec *results.RunRecord, metrics map[string]float64) {
	e := r.cfg.Spec
	if e.Cache == cacheCold {
		unix.Sync()
		if err := os.WriteFile(dropCachesFile, []byte("3"), 0); err != nil {
			rec.Facts["page_cache"] = "not dropped: " + err.Error()
			rec.Warnings = append(rec.Warnings, results.Warning{Code: WarnPageCacheKept, Severity: "warning",
				Message: "cache: cold asked for the page cache to be dropped before the run, but writing " + dropCachesFile + " failed: " + err.Error() + "; the data may have been read from memory"})
		} else {
			rec.Facts["page_cache"] = "dropped before the run (sync; 3 > " + dropCachesFile + ")"
		}
	}
	q := e.QuietStart
	if q.Timeout <= 0 {
		rec.Facts["quiet_start"] = "off (quietStart.timeout: 0s)"
		return
	}
	cfg := hostenv.QuietConfig{Timeout: q.Timeout.D(), Window: q.Window.D(), CPUBusy: float64(q.CPUBusy), DiskBusy: float64(q.DiskBusy)}
	res, err := hostenv.WaitQuiet(ctx, cfg)
	if err != nil {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			rec.Facts["quiet_start"] = "could not read the host's load: " + err.Error()
			rec.Warnings = append(rec.Warnings, results.Warning{Code: WarnHostNotQuiet, Severity: "warning",
				Message: "the quiet-start wait could not read the host's load: " + err.Error()})
		}
		return
	}
	metrics[MetricQuietWait] = res.Waited.Seconds()
	rec.Facts["quiet_start"] = res.String(cfg)
	if res.TimedOut {
		rec.Warnings = append(rec.Warnings, results.Warning{Code: WarnHostNotQuiet, Severity: "warning",
			Message: res.String(cfg) + "; the run started anyway: something else competes with it (quietStart.timeout bounds the wait)"})
	}
}
