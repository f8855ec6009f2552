package cli

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/boxbench/boxbench/plan"
)

// barProgress draws one progress bar on a terminal: runs done / total, the current cell, run
// i/n, phase, elapsed and remaining time.
type barProgress struct {
	bar   *progressbar.ProgressBar
	total int
	done  int
	out   io.Writer
}

func newBarProgress(out io.Writer) *barProgress { return &barProgress{out: out} }

func (p *barProgress) Begin(total, done int) {
	p.total, p.done = total, done
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.out),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true))
	_ = p.bar.Set(done)
}

func (p *barProgress) Add(n int) {
	p.total += n
	p.bar.ChangeMax(p.total)
}

func (p *barProgress) Phase(run plan.Run, phase string) {
	p.bar.Describe(fmt.Sprintf("%s run %d/%d: %s", run.Cell.ID, p.done+1, p.total, phase))
}

func (p *barProgress) End(run plan.Run, status, reason string) {
	p.done++
	_ = p.bar.Set(p.done)
	if status != "ok" {
		_ = p.bar.Clear()
		fmt.Fprintf(p.out, "run %s failed: %s\n", run.ID(), firstLine(reason))
	}
}

func (p *barProgress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.out)
	}
}

// logProgress writes one log line per phase: for pipes, files and CI logs.
type logProgress struct {
	log                *slog.Logger
	total, done, first int // first: runs already stored when this session began
	start              time.Time
}

func (p *logProgress) Begin(total, done int) {
	p.total, p.done, p.first, p.start = total, done, done, time.Now()
	p.log.Info("experiment", "runs", total, "already_stored", done)
}

func (p *logProgress) Add(n int) {
	p.total += n
	p.log.Info("adaptive repetitions added runs", "added", n, "runs", p.total)
}

func (p *logProgress) Phase(run plan.Run, phase string) {
	p.log.Info(phase, "run", fmt.Sprintf("%d/%d", p.done+1, p.total), "cell", run.Cell.ID, "rep", run.Rep,
		"elapsed", time.Since(p.start).Round(time.Second), "remaining", p.remaining())
}

func (p *logProgress) End(run plan.Run, status, reason string) {
	p.done++
	if status == "ok" {
		p.log.Info("run ok", "run", run.ID())
	} else {
		p.log.Warn("run failed", "run", run.ID(), "reason", firstLine(reason))
	}
}

func (p *logProgress) Finish() {}

func (p *logProgress) remaining() string {
	if p.done == p.first {
		return "unknown"
	}
	per := time.Since(p.start) / time.Duration(p.done-p.first)
	return (per * time.Duration(p.total-p.done)).Round(time.Second).String()
}
