package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/recovery"
	"github.com/boxbench/boxbench/workload"
)

// bomb is a collector that panics on its third read (the baseline and one tick succeed).
type bomb struct{ n int }

func (b *bomb) name() string { return "bomb" }
func (b *bomb) collect(r reading) error {
	b.n++
	if b.n == 3 {
		panic("collector bug")
	}
	r.set("memory_usage_bytes", float64(b.n))
	return nil
}

// A collector's panic in the background loop ends sampling; Stop returns it as a recovered
// panic with its stack, and the samples taken before it.
func TestSamplerPanicIsAnError(t *testing.T) {
	s := &Sampler{interval: 100 * time.Millisecond, clk: workload.Clock{Start: time.Now()}, log: slog.New(slog.DiscardHandler)}
	b := &bomb{}
	s.series = []*series{{source: "db", c: b}}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-s.done // the loop ends at the panic, not at Stop
	samples, err := s.Stop()
	var pe *recovery.Error
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "collector bug") || !strings.Contains(err.Error(), "panic_test.go") {
		t.Fatalf("want the recovered panic with its stack, got %v", err)
	}
	if len(samples) == 0 {
		t.Error("samples taken before the panic were lost")
	}
}
