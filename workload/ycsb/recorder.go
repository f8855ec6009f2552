package ycsb

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/driver"
)

// Histogram geometry of every latency histogram boxbench stores: nanoseconds, 3 significant
// digits, up to 10 minutes. A longer operation is recorded as 10 minutes and counted in the
// "clamped_values_total" metric.
const (
	histLowest  = 1
	histHighest = int64(10 * 60 * 1e9)
	histDigits  = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histLowest, histHighest, histDigits) }

// Error kinds counted in Result.Errors.
const (
	kindOK = iota
	kindNotFound
	kindTimeout
	kindConn
	kindUnsupported
	kindCanceled
	kindOther
	numKinds
)

var kindNames = [numKinds]string{"", "not_found", "timeout", "conn", "unsupported", "canceled", "other"}

// errorKind classifies a driver error without allocating.
func errorKind(err error) int {
	switch {
	case err == nil:
		return kindOK
	case errors.Is(err, driver.ErrNotFound):
		return kindNotFound
	case errors.Is(err, driver.ErrUnsupported):
		return kindUnsupported
	case errors.Is(err, context.Canceled):
		return kindCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return kindTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return kindTimeout
	}
	var oe *net.OpError
	if errors.As(err, &oe) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return kindConn
	}
	return kindOther
}

// Series of one operation type: latency from the intended start (open loop) or the actual
// start (closed loop), and service time from the actual start; successes and errors apart.
const (
	serLatency = iota
	serService
	numSeries
)

var seriesNames = [numSeries]string{"latency", "service"}

// histSet is what one worker recorded during one interval.
type histSet struct {
	h       [numOps][numSeries][2]*hdrhistogram.Histogram // [op][series][0 ok, 1 error]
	errs    [numKinds]int64
	clamped int64
}

func (s *histSet) reset() {
	for o := range s.h {
		for se := range s.h[o] {
			for _, h := range s.h[o][se] {
				if h != nil && h.TotalCount() > 0 {
					h.Reset()
				}
			}
		}
	}
	s.errs = [numKinds]int64{}
	s.clamped = 0
}

// recorder is one worker's: the worker records into the active set without a lock; the
// collector swaps in the spare set and waits until the worker is not inside a record that may
// still hold the old one (a single-writer version of HdrHistogram's WriterReaderPhaser).
type recorder struct {
	seq    atomic.Uint64 // odd while the worker is inside record
	active atomic.Pointer[histSet]
	spare  *histSet // the collector's
	open   bool     // record the service series apart (open loop); closed loop: it equals latency
}

func newRecorder(open bool, props [numOps]float64) *recorder {
	r := &recorder{open: open}
	a, b := &histSet{}, &histSet{}
	// Allocate the success histograms of the mix's operations now, so that the measured hot
	// path does not; error histograms are allocated on the first error.
	for o, p := range props {
		if p > 0 {
			for _, s := range []*histSet{a, b} {
				s.h[o][serLatency][0] = newHist()
				if open {
					s.h[o][serService][0] = newHist()
				}
			}
		}
	}
	r.active.Store(a)
	r.spare = b
	return r
}

// record files one operation: latency and service time in ns, and its error kind.
func (r *recorder) record(op opType, kind int, latency, service int64) {
	r.seq.Add(1)
	s := r.active.Load()
	e := 0
	if kind != kindOK {
		e = 1
		s.errs[kind]++
	}
	s.add(op, serLatency, e, latency)
	if r.open {
		s.add(op, serService, e, service)
	}
	r.seq.Add(1)
}

func (s *histSet) add(op opType, ser, e int, v int64) {
	h := s.h[op][ser][e]
	if h == nil {
		h = newHist()
		s.h[op][ser][e] = h
	}
	if v > histHighest {
		v = histHighest
		s.clamped++
	} else if v < 0 {
		v = 0
	}
	_ = h.RecordValue(v) // cannot fail: v is in range
}

// swap hands the collector what the worker recorded since the last swap; the collector must
// give the set back with release after reading it. Not for concurrent use by several
// collectors.
func (r *recorder) swap() *histSet {
	old := r.active.Swap(r.spare)
	r.spare = nil
	if s := r.seq.Load(); s&1 == 1 {
		for r.seq.Load() == s {
			runtime.Gosched()
		}
	}
	return old
}

func (r *recorder) release(s *histSet) {
	s.reset()
	r.spare = s
}
