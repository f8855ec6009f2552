package ycsb

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// The number generators of YCSB's CoreWorkload (site.ycsb.generator), ported to keep the same
// distributions, constants and quirks, so that a boxbench run and a YCSB run of the same
// workload pick keys the same way. Each worker owns its generators and its random source; only
// the insert counter is shared.

// fnvOffsetBasis64 and fnvPrime64 are the FNV-1a 64-bit constants of YCSB's Utils.
const (
	fnvOffsetBasis64 = 0xCBF29CE484222325
	fnvPrime64       = 1099511628211
)

// FNVHash64 is YCSB's Utils.fnvhash64 (and Utils.hash): FNV-1a over the 8 bytes of v, least
// significant first, then Math.abs of the signed result. Like Java's Math.abs it leaves
// math.MinInt64 negative.
func FNVHash64(v int64) int64 {
	h := uint64(fnvOffsetBasis64)
	u := uint64(v)
	for i := 0; i < 8; i++ {
		h ^= u & 0xff
		u >>= 8
		h *= fnvPrime64
	}
	s := int64(h)
	if s < 0 {
		s = -s // Math.abs: -MinInt64 overflows back to MinInt64, as in Java
	}
	return s
}

// intGen draws a key number (or a scan length, or a field index).
type intGen interface {
	next(r *rand.Rand) int64
}

// uniformGen is UniformLongGenerator: uniform over [lb, ub]. YCSB draws abs(nextLong) % n,
// which is biased by at most n/2^63; this draws without bias.
type uniformGen struct{ lb, n int64 }

func newUniform(lb, ub int64) *uniformGen { return &uniformGen{lb: lb, n: ub - lb + 1} }

func (g *uniformGen) next(r *rand.Rand) int64 { return g.lb + r.Int64N(g.n) }

// Zipfian constants of YCSB's ZipfianGenerator and ScrambledZipfianGenerator.
const (
	DefaultZipfianConstant = 0.99
	// scrambledItemCount is ScrambledZipfianGenerator.ITEM_COUNT: the scrambled generator draws
	// ranks from a zipfian over 10^10 items and hashes them onto the key space.
	scrambledItemCount = 10_000_000_000
	// scrambledZetan is ScrambledZipfianGenerator.ZETAN, zeta(10^10, 0.99), precomputed by
	// YCSB; TestZetaLarge checks zeta() reproduces it.
	scrambledZetan = 26.46902820178302
)

// zipfianGen is ZipfianGenerator (Gray et al., "Quickly generating billion-record synthetic
// databases", SIGMOD 1994): item 0 is the most popular. The item count may grow between draws
// (the "latest" distribution); zeta is then extended incrementally as YCSB does.
type zipfianGen struct {
	items, base                   int64
	theta, alpha, zeta2theta, eta float64
	zetan                         float64
	countForZeta                  int64
	half                          float64 // 1 + 0.5^theta
}

// newZipfian covers [min, max]; zetan is zeta(max-min+1, theta), or 0 to compute it.
func newZipfian(min, max int64, theta, zetan float64) *zipfianGen {
	items := max - min + 1
	if zetan == 0 {
		zetan = zeta(items, theta)
	}
	z := &zipfianGen{items: items, base: min, theta: theta, zetan: zetan, countForZeta: items,
		zeta2theta: zeta(2, theta), alpha: 1 / (1 - theta), half: 1 + math.Pow(0.5, theta)}
	z.eta = (1 - math.Pow(2/float64(items), 1-theta)) / (1 - z.zeta2theta/zetan)
	return z
}

func (z *zipfianGen) next(r *rand.Rand) int64 { return z.nextN(r, z.items) }

// nextN draws from the first itemcount items.
func (z *zipfianGen) nextN(r *rand.Rand, itemcount int64) int64 {
	if itemcount > z.countForZeta {
		// YCSB extends zeta but, a quirk kept here, recomputes eta with the item count the
		// generator was built with; it never shrinks (allowitemcountdecrease=false).
		z.zetan = zetaFrom(z.countForZeta, itemcount, z.theta, z.zetan)
		z.countForZeta = itemcount
		z.eta = (1 - math.Pow(2/float64(z.items), 1-z.theta)) / (1 - z.zeta2theta/z.zetan)
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < z.half {
		return z.base + 1
	}
	return z.base + int64(float64(itemcount)*math.Pow(z.eta*u-z.eta+1, z.alpha))
}

// zeta is sum_{i=1..n} i^-theta. Above exactLimit terms the tail is summed by the
// Euler–Maclaurin formula (YCSB sums every term, which takes minutes for 10^10 items); the
// truncation error is below 1e-15 relative (TestZetaLarge).
func zeta(n int64, theta float64) float64 { return zetaFrom(0, n, theta, 0) }

const exactLimit = 1 << 20

// zetaFrom extends sum (of the first st terms) to n terms.
func zetaFrom(st, n int64, theta, sum float64) float64 {
	if n-st <= exactLimit {
		for i := st; i < n; i++ {
			sum += 1 / math.Pow(float64(i+1), theta)
		}
		return sum
	}
	a := st + exactLimit // exact up to a, then the tail (a, n]
	sum = zetaFrom(st, a, theta, sum)
	fa, fb := float64(a), float64(n)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	d1 := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	d3 := func(x float64) float64 { return -theta * (theta + 1) * (theta + 2) * math.Pow(x, -theta-3) }
	integral := (math.Pow(fb, 1-theta) - math.Pow(fa, 1-theta)) / (1 - theta)
	return sum + integral + (f(fb)-f(fa))/2 + (d1(fb)-d1(fa))/12 - (d3(fb)-d3(fa))/720
}

// scrambledZipfianGen is ScrambledZipfianGenerator: zipfian popularity over 10^10 ranks, each
// rank hashed (FNV-64) onto [min, max], so popular keys are spread over the key space instead
// of clustered at its start.
type scrambledZipfianGen struct {
	z        *zipfianGen
	min, cnt int64
}

func newScrambledZipfian(min, max int64, theta float64) *scrambledZipfianGen {
	zn := scrambledZetan
	if theta != DefaultZipfianConstant {
		zn = zeta(scrambledItemCount, theta)
	}
	return &scrambledZipfianGen{z: newZipfian(0, scrambledItemCount-1, theta, zn), min: min, cnt: max - min + 1}
}

func (g *scrambledZipfianGen) next(r *rand.Rand) int64 {
	return g.min + FNVHash64(g.z.next(r))%g.cnt
}

// latestGen is SkewedLatestGenerator: zipfian over recency, following the acknowledged insert
// counter, so the newest records are the most popular. As in YCSB it draws
// last - zipfian(last), which never returns key 0.
type latestGen struct {
	basis *ackCounter
	z     *zipfianGen
}

func newLatest(basis *ackCounter, theta float64, zetan float64) *latestGen {
	return &latestGen{basis: basis, z: newZipfian(0, basis.last()-1, theta, zetan)}
}

func (g *latestGen) next(r *rand.Rand) int64 {
	max := g.basis.last()
	if max < 1 {
		return 0
	}
	return max - g.z.nextN(r, max)
}

// hotspotGen is HotspotIntegerGenerator: a fraction opn of the draws fall uniformly in the
// first fraction data of [lb, ub] (the hot set), the others uniformly in the rest.
type hotspotGen struct {
	lb, hot, cold int64
	opn           float64
}

func newHotspot(lb, ub int64, data, opn float64) *hotspotGen {
	n := ub - lb + 1
	hot := int64(float64(n) * data)
	return &hotspotGen{lb: lb, hot: hot, cold: n - hot, opn: opn}
}

func (g *hotspotGen) next(r *rand.Rand) int64 {
	// YCSB divides by zero on an empty hot or cold set; those draws go to the other set here.
	if g.cold == 0 || (g.hot > 0 && r.Float64() < g.opn) {
		return g.lb + r.Int64N(g.hot)
	}
	return g.lb + g.hot + r.Int64N(g.cold)
}

// ackCounter is AcknowledgedCounterGenerator: next hands out insert key numbers; last is the
// highest number below which every insert was acknowledged (finished, successfully or not), so
// that reads during a run with inserts only choose keys that exist.
type ackCounter struct {
	counter atomic.Int64 // next number to hand out
	limit   atomic.Int64 // last()
	mu      sync.Mutex
	window  []atomic.Bool
}

// ackWindow is YCSB's WINDOW_SIZE: how far acknowledgements may run ahead of the limit.
const ackWindow = 1 << 20

func newAckCounter(start int64) *ackCounter {
	c := &ackCounter{window: make([]atomic.Bool, ackWindow)}
	c.counter.Store(start)
	c.limit.Store(start - 1)
	return c
}

func (c *ackCounter) next() int64 { return c.counter.Add(1) - 1 }
func (c *ackCounter) last() int64 { return c.limit.Load() }

// acknowledge marks v done and, if no other worker is doing it, advances the limit over the
// contiguous run of acknowledged numbers (YCSB uses the same tryLock).
func (c *ackCounter) acknowledge(v int64) {
	c.window[v&(ackWindow-1)].Store(true)
	if !c.mu.TryLock() {
		return
	}
	defer c.mu.Unlock()
	lim := c.limit.Load()
	for {
		i := (lim + 1) & (ackWindow - 1)
		if !c.window[i].Load() {
			break
		}
		c.window[i].Store(false)
		lim++
	}
	c.limit.Store(lim)
}

// opChooser is DiscreteGenerator over the operation proportions, in YCSB's order.
type opChooser struct {
	cum [numOps]float64
}

func newOpChooser(p [numOps]float64) *opChooser {
	var c opChooser
	sum := 0.0
	for i, w := range p {
		sum += w
		c.cum[i] = sum
	}
	for i := range c.cum {
		c.cum[i] /= sum
	}
	return &c
}

func (c *opChooser) next(r *rand.Rand) opType {
	u := r.Float64()
	for i, t := range c.cum {
		if u < t {
			return opType(i)
		}
	}
	// u is below 1 and the last cumulative weight is 1 up to rounding: the last op with weight.
	for i := numOps - 1; i > 0; i-- {
		if c.cum[i] > c.cum[i-1] {
			return opType(i)
		}
	}
	return 0
}
