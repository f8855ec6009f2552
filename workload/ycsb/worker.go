package ycsb

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/boxbench/boxbench/driver"
)

// shared is what the workers of one run share; read-only once they start, except the
// counters and the stop flag.
type shared struct {
	cfg        resolved
	db         driver.DB
	ctx        context.Context // not cancellable: see Run
	origin     time.Time       // the run's monotonic origin
	warmupEnd  int64           // ns from origin
	stop       atomic.Bool
	insertKeys *ackCounter
	allFields  []string
	oneField   [][]string // oneField[i] = allFields[i:i+1]
	periodNs   float64    // open loop: ns between one worker's intended starts
	hashed     bool
}

func (s *shared) now() int64 { return int64(time.Since(s.origin)) }

// worker is one thread of the run. All its state is its own; nothing on its path allocates.
type worker struct {
	sh         *shared
	r          *rand.Rand
	ops        *opChooser
	keys       intGen
	fields     intGen
	scanLen    intGen
	rec        *recorder
	quota      int64 // measured operations to do; 0: no limit
	offsetNs   float64
	keyBuf     []byte
	vals       [][]byte
	pool       []byte // random printable bytes values are cut from
	measuredOK int64
}

// newWorker seeds the worker's generators from (seed, id), so a run is reproducible.
func newWorker(sh *shared, id int, keys intGen, rec *recorder, quota int64) *worker {
	c := sh.cfg
	r := rand.New(rand.NewPCG(c.Seed, uint64(id)+1))
	w := &worker{sh: sh, r: r, ops: newOpChooser(c.props), keys: keys, rec: rec, quota: quota,
		fields: newUniform(0, int64(c.FieldCount-1)), keyBuf: make([]byte, 0, 32),
		vals: make([][]byte, c.FieldCount)}
	if c.ScanLengthDistribution == "zipfian" {
		w.scanLen = newZipfian(1, int64(c.scanLength), c.ZipfianConstant, 0)
	} else {
		w.scanLen = newUniform(1, int64(c.scanLength))
	}
	w.pool = randomPool(r, max(64<<10, 4*c.FieldLength))
	if sh.periodNs > 0 {
		// Stagger the workers' schedules over one period so they do not fire together.
		w.offsetNs = sh.periodNs * float64(id) / float64(c.Threads)
	}
	return w
}

// randomPool returns n bytes in YCSB RandomByteIterator's alphabet (' ' to '?').
func randomPool(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; {
		v := r.Uint64()
		for j := 0; j < 10 && i < n; j++ {
			b[i] = byte(' ' + v&31)
			v >>= 6
			i++
		}
	}
	return b
}

// key formats key number n as YCSB's buildKeyName does, into the worker's buffer. The string
// shares the buffer: it is valid until the next call, which is all a driver may keep it for.
func (w *worker) key(n int64) string {
	w.keyBuf = appendKey(w.keyBuf[:0], n, w.sh.hashed, w.sh.cfg.ZeroPadding)
	return unsafe.String(unsafe.SliceData(w.keyBuf), len(w.keyBuf))
}

// appendKey appends "user" and the key number, hashed and zero-padded as configured.
func appendKey(dst []byte, n int64, hashed bool, pad int) []byte {
	if hashed {
		n = FNVHash64(n)
	}
	var num [24]byte
	d := strconv.AppendInt(num[:0], n, 10)
	dst = append(dst, "user"...)
	for i := len(d); i < pad; i++ {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// nextKeynum is CoreWorkload.nextKeynum: a key number that has been inserted (acknowledged).
func (w *worker) nextKeynum() int64 {
	last := w.sh.insertKeys.last()
	for {
		k := w.keys.next(w.r)
		if k <= last {
			return k
		}
	}
}

// values fills n field values with slices of the random pool.
func (w *worker) values(n int) [][]byte {
	l := w.sh.cfg.FieldLength
	for i := 0; i < n; i++ {
		off := w.r.IntN(len(w.pool) - l + 1)
		w.vals[i] = w.pool[off : off+l]
	}
	return w.vals[:n]
}

// writeSet returns the fields and values an update writes: all, or one chosen uniformly.
func (w *worker) writeSet() ([]string, [][]byte) {
	if w.sh.cfg.WriteAllFields {
		return w.sh.allFields, w.values(len(w.sh.allFields))
	}
	return w.sh.oneField[w.fields.next(w.r)], w.values(1)
}

// readSet returns the fields a read asks for: nil (all) or one chosen uniformly.
func (w *worker) readSet() []string {
	if w.sh.cfg.ReadAllFields {
		return nil
	}
	return w.sh.oneField[w.fields.next(w.r)]
}

// do runs one operation.
func (w *worker) do(op opType) error {
	db, ctx := w.sh.db, w.sh.ctx
	switch op {
	case opRead:
		return db.Read(ctx, w.key(w.nextKeynum()), w.readSet())
	case opUpdate:
		k := w.key(w.nextKeynum())
		f, v := w.writeSet()
		return db.Update(ctx, k, f, v)
	case opInsert:
		n := w.sh.insertKeys.next()
		err := db.Insert(ctx, w.key(n), w.sh.allFields, w.values(len(w.sh.allFields)))
		w.sh.insertKeys.acknowledge(n) // as YCSB: acknowledged whatever the outcome
		return err
	case opScan:
		k := w.key(w.nextKeynum())
		return db.Scan(ctx, k, int(w.scanLen.next(w.r)), w.readSet())
	case opRMW:
		k := w.key(w.nextKeynum())
		if err := db.Read(ctx, k, w.readSet()); err != nil {
			return err
		}
		f, v := w.writeSet()
		return db.Update(ctx, k, f, v)
	}
	return nil
}

// run issues operations until the run stops or the quota is done. Closed loop: back to back.
// Open loop: operation i is due at offset + i·period from the origin; a late worker catches
// up without sleeping, and latency counts from the due time, so a stall shows in it.
func (w *worker) run() {
	sh := w.sh
	open := sh.periodNs > 0
	for i := int64(0); ; i++ {
		if sh.stop.Load() {
			return
		}
		var intended int64
		if open {
			intended = int64(w.offsetNs + float64(i)*sh.periodNs)
			if d := intended - sh.now(); d > 0 {
				time.Sleep(time.Duration(d))
				if sh.stop.Load() {
					return
				}
			}
		}
		op := w.ops.next(w.r)
		start := sh.now()
		if !open {
			intended = start
		}
		err := w.do(op)
		end := sh.now()
		if sh.stop.Load() {
			return // finished after the window closed: not part of the run
		}
		w.rec.record(op, errorKind(err), end-intended, end-start)
		if w.quota > 0 && end >= sh.warmupEnd {
			w.measuredOK++
			if w.measuredOK >= w.quota {
				return
			}
		}
	}
}
