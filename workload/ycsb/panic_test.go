package ycsb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/driver/cassandra/cql"
	"github.com/boxbench/boxbench/driver/noop"
	"github.com/boxbench/boxbench/internal/recovery"
	"github.com/boxbench/boxbench/workload"
)

// panicky is the no-op driver, except that its 100th read and its 50th batch insert panic:
// a driver bug in one worker goroutine.
type panicky struct {
	noop.DB
	reads, inserts atomic.Int64
}

func (p *panicky) Read(context.Context, string, []string) error {
	if p.reads.Add(1) == 100 {
		panic("driver bug in read")
	}
	return nil
}

func (p *panicky) BatchInsert(context.Context, []string, []string, [][][]byte) error {
	if p.inserts.Add(1) == 50 {
		panic("driver bug in insert")
	}
	return nil
}

// A worker's panic ends the run (every worker stops, long before the duration) with an error
// holding the panic and the worker's stack, instead of ending the process.
func TestWorkerPanicIsAnError(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Mix, cfg.RecordCount, cfg.Threads = "b", 1000, 4
	cfg.Warmup, cfg.Duration = 0, time.Hour
	w, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.run(context.Background(), &panicky{}, workload.Clock{Start: time.Now()}, nil)
	var pe *recovery.Error
	if !errors.As(err, &pe) {
		t.Fatalf("want a recovered panic, got %v", err)
	}
	if !strings.Contains(err.Error(), "driver bug in read") || !strings.Contains(err.Error(), "panic_test.go") {
		t.Errorf("error lacks the panic or its stack: %v", err)
	}
	if res == nil || res.Measured >= cfg.Duration {
		t.Errorf("the run did not end at the panic: %+v", res)
	}
}

func TestLoadWorkerPanicIsAnError(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecordCount, cfg.LoadThreads, cfg.LoadBatch = 100000, 4, 10
	db := &panicky{}
	w, err := New(cfg, map[string]Opener{"noop": func(context.Context, driver.Endpoint, driver.Credentials, int) (driver.DB, error) {
		return db, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Load(context.Background(), workload.Target{DBMS: "noop"})
	if err == nil || !strings.Contains(err.Error(), "panic in ycsb load worker") || !strings.Contains(err.Error(), "driver bug in insert") {
		t.Fatalf("want the load worker's panic, got %v", err)
	}
}

// slowReplicas is the no-op driver, except that its first failures batch inserts answer with
// Cassandra's write timeout (the real error type of driver/cassandra).
type slowReplicas struct {
	noop.DB
	failures int64
	calls    atomic.Int64
}

func (s *slowReplicas) BatchInsert(context.Context, []string, []string, [][][]byte) error {
	if s.calls.Add(1) <= s.failures {
		return fmt.Errorf("cassandra: %w", &cql.Error{Code: cql.CodeWriteTimeout, Message: "Operation timed out - received only 0 responses."})
	}
	return nil
}

// A load write the database answered with a retryable error is sent again: a few such answers
// cost a second, not the run; one that keeps coming ends the load with the answer and the
// number of attempts.
func TestLoadRetriesRetryableWrites(t *testing.T) {
	load := func(db driver.DB) error {
		cfg := DefaultConfig()
		cfg.RecordCount, cfg.LoadThreads, cfg.LoadBatch = 100, 1, 10
		w, err := New(cfg, map[string]Opener{"noop": func(context.Context, driver.Endpoint, driver.Credentials, int) (driver.DB, error) {
			return db, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		return w.Load(context.Background(), workload.Target{DBMS: "noop"})
	}
	twice := &slowReplicas{failures: 2}
	if err := load(twice); err != nil || twice.calls.Load() != 12 {
		t.Errorf("two write timeouts: err %v after %d calls, want nil after 12 (10 batches, 2 retries)", err, twice.calls.Load())
	}
	always := &slowReplicas{failures: 1 << 40}
	err := load(always)
	if err == nil || !strings.Contains(err.Error(), "write timeout") || !strings.Contains(err.Error(), "5 attempts") || always.calls.Load() != loadAttempts {
		t.Errorf("a timeout on every attempt: err %v after %d calls, want the timeout after %d attempts", err, always.calls.Load(), loadAttempts)
	}
}
