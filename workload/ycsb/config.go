package ycsb

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"
)

// opType is an operation of the mix, in YCSB's DiscreteGenerator order.
type opType uint8

const (
	opRead opType = iota
	opUpdate
	opInsert
	opScan
	opRMW
	numOps
)

// OpNames are the operation names used in Proportions and in results, in YCSB's order.
var OpNames = [numOps]string{"read", "update", "insert", "scan", "rmw"}

func (o opType) String() string { return OpNames[o] }

// Mixes are the named operation mixes: YCSB's core workloads a–f and the two mixes of the
// storage-tier study (sensor data: 100 % insert; social media: 95 % read, 5 % update).
var Mixes = map[string]Mix{
	"a":           {Proportions: [numOps]float64{0.5, 0.5, 0, 0, 0}, Distribution: "zipfian"},
	"b":           {Proportions: [numOps]float64{0.95, 0.05, 0, 0, 0}, Distribution: "zipfian"},
	"c":           {Proportions: [numOps]float64{1, 0, 0, 0, 0}, Distribution: "zipfian"},
	"d":           {Proportions: [numOps]float64{0.95, 0, 0.05, 0, 0}, Distribution: "latest"},
	"e":           {Proportions: [numOps]float64{0, 0, 0.05, 0.95, 0}, Distribution: "zipfian", ScanLength: 100},
	"f":           {Proportions: [numOps]float64{0.5, 0, 0, 0, 0.5}, Distribution: "zipfian"},
	"write-heavy": {Proportions: [numOps]float64{0, 0, 1, 0, 0}, Distribution: "zipfian"},
	"read-heavy":  {Proportions: [numOps]float64{0.95, 0.05, 0, 0, 0}, Distribution: "zipfian"},
}

// Mix is a named workload: proportions in OpNames order, and the request distribution and
// maximum scan length its YCSB workload file sets.
type Mix struct {
	Proportions  [numOps]float64
	Distribution string
	ScanLength   int // 0: CoreWorkload's default
}

// Valid values of the string fields.
var (
	Distributions     = []string{"uniform", "zipfian", "latest", "hotspot"}
	ScanDistributions = []string{"uniform", "zipfian"}
	KeyOrders         = []string{"hashed", "ordered"}
)

// Config configures the generator. Start from DefaultConfig; New validates.
type Config struct {
	// Mix names a mix of Mixes; leave it empty to give Proportions instead.
	Mix string
	// Proportions is a custom mix: weights of read, update, insert, scan and rmw summing to 1.
	Proportions map[string]float64
	// ReadProportion, when set, replaces the read share of the mix (named or custom): the
	// other operations keep their ratios and share the rest; a mix that only reads gives the
	// rest to update (YCSB's read/update pair). A read-proportion sweep sets it per cell.
	ReadProportion *float64
	// RequestDistribution picks the keys of reads, updates, scans and rmw: uniform, zipfian
	// (YCSB's scrambled zipfian), latest or hotspot. "" means the mix's (YCSB's workload file;
	// uniform, CoreWorkload's default, for custom proportions).
	RequestDistribution string
	// ZipfianConstant is the skew of zipfian and latest (YCSB: 0.99).
	ZipfianConstant float64
	// HotspotDataFraction is the share of keys in the hot set, HotspotOpnFraction the share of
	// operations going to it (YCSB: 0.2 and 0.8).
	HotspotDataFraction, HotspotOpnFraction float64
	// KeyOrder: "hashed" (key numbers hashed with FNV-64, YCSB's insertorder=hashed) or
	// "ordered".
	KeyOrder string
	// ZeroPadding pads the key number to this many digits (YCSB: 1, i.e. none).
	ZeroPadding int
	// Table is the SQL table name (YCSB: usertable).
	Table string
	// RecordCount is the number of records loaded; FieldCount and FieldLength their shape.
	RecordCount int64
	FieldCount  int
	FieldLength int
	// ReadAllFields reads every field (else one, chosen uniformly); WriteAllFields updates
	// every field (else one). Inserts always write every field.
	ReadAllFields  bool
	WriteAllFields bool
	// ScanLength is the maximum scan length (minimum 1); 0 means the mix's (YCSB: 1000;
	// workload e: 100). ScanLengthDistribution: uniform or zipfian.
	ScanLength             int
	ScanLengthDistribution string
	// Threads is the number of workers, each with its own connection.
	Threads int
	// Duration of the measured window (after Warmup); OperationCount, if not 0, ends the run
	// once that many operations were measured (YCSB's operationcount, split over the threads).
	// At least one must be set; with both, whichever comes first.
	Duration       time.Duration
	OperationCount int64
	// Warmup runs the workload before the measured window; its intervals are kept, marked
	// warm-up, and excluded from the summaries.
	Warmup time.Duration
	// TargetRate is the offered load in operations per second over all threads (open loop,
	// latency from the intended start time); 0 runs a closed loop.
	TargetRate float64
	// Seed makes key choice, operation choice and values deterministic.
	Seed uint64
	// Interval is the length of one stored histogram interval.
	Interval time.Duration
	// LoadThreads (0: Threads) and LoadBatch (records per insert round trip) shape Load.
	LoadThreads int
	LoadBatch   int
	// ClientProcs is how many threads may run the generator's Go code at once (GOMAXPROCS)
	// during Run. 0 (the default) adapts: the run starts with one and adds one after each
	// interval in which the process kept them busy (90 % of their CPU time), up to the
	// process's GOMAXPROCS when Run started; n > 0 fixes n; a negative value leaves GOMAXPROCS
	// alone. GOMAXPROCS is process-wide: it is restored when Run returns, and of two Runs at
	// the same time only the first sets it. See procs.go for why.
	ClientProcs int
}

// DefaultConfig returns YCSB CoreWorkload's defaults where YCSB has one, workload a, one
// minute measured after ten seconds of warm-up, closed loop.
func DefaultConfig() Config {
	return Config{
		Mix: "a", ZipfianConstant: DefaultZipfianConstant,
		HotspotDataFraction: 0.2, HotspotOpnFraction: 0.8,
		KeyOrder: "hashed", ZeroPadding: 1, Table: "usertable",
		RecordCount: 1000, FieldCount: 10, FieldLength: 100,
		ReadAllFields: true, WriteAllFields: false,
		ScanLengthDistribution: "uniform",
		Threads:                1, Duration: time.Minute, Warmup: 10 * time.Second,
		Interval: time.Second, LoadBatch: 100,
	}
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Validate returns every problem of c at once (errors.Join), each naming the field, the bad
// value and what is valid.
func (c Config) Validate() error {
	var errs []error
	// Fields are named as the spec names them (workload.mix, workload.threads, …).
	bad := func(field string, v any, valid string) {
		errs = append(errs, fmt.Errorf("%s: %v is invalid: %s", specName(field), v, valid))
	}
	switch {
	case c.Mix != "" && c.Proportions != nil:
		bad("Mix", fmt.Sprintf("%q with Proportions", c.Mix), "give a named mix or custom proportions, not both")
	case c.Mix == "" && c.Proportions == nil:
		bad("Mix", `""`, "name a mix ("+strings.Join(mixNames(), ", ")+") or give Proportions")
	case c.Mix != "":
		if _, ok := Mixes[c.Mix]; !ok {
			bad("Mix", fmt.Sprintf("%q", c.Mix), "one of "+strings.Join(mixNames(), ", "))
		}
	default:
		errs = append(errs, checkProportions(c.Proportions)...)
	}
	if r := c.ReadProportion; r != nil && !(*r >= 0 && *r <= 1) {
		bad("ReadProportion", *r, "must be in [0, 1]")
	}
	oneOf := func(field, v string, valid []string, emptyOK bool) {
		if v == "" && emptyOK {
			return
		}
		for _, s := range valid {
			if v == s {
				return
			}
		}
		bad(field, fmt.Sprintf("%q", v), "one of "+strings.Join(valid, ", "))
	}
	oneOf("RequestDistribution", c.RequestDistribution, Distributions, true)
	oneOf("ScanLengthDistribution", c.ScanLengthDistribution, ScanDistributions, false)
	oneOf("KeyOrder", c.KeyOrder, KeyOrders, false)
	if !(c.ZipfianConstant > 0 && c.ZipfianConstant < 1) {
		bad("ZipfianConstant", c.ZipfianConstant, "must be in (0, 1); YCSB uses 0.99")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"HotspotDataFraction", c.HotspotDataFraction}, {"HotspotOpnFraction", c.HotspotOpnFraction}} {
		if !(f.v >= 0 && f.v <= 1) {
			bad(f.name, f.v, "must be in [0, 1]")
		}
	}
	if c.ZeroPadding < 0 || c.ZeroPadding > 20 {
		bad("ZeroPadding", c.ZeroPadding, "must be in [0, 20]")
	}
	if !identifier.MatchString(c.Table) {
		bad("Table", fmt.Sprintf("%q", c.Table), "must be an SQL identifier (letters, digits, _; not starting with a digit)")
	}
	positive := func(field string, v int64) {
		if v < 1 {
			bad(field, v, "must be at least 1")
		}
	}
	positive("RecordCount", c.RecordCount)
	positive("FieldCount", int64(c.FieldCount))
	positive("FieldLength", int64(c.FieldLength))
	positive("Threads", int64(c.Threads))
	positive("LoadBatch", int64(c.LoadBatch))
	if c.ScanLength < 0 {
		bad("ScanLength", c.ScanLength, "must be at least 1, or 0 for the mix's default")
	}
	if c.LoadThreads < 0 {
		bad("LoadThreads", c.LoadThreads, "must be at least 1, or 0 for Threads")
	}
	if c.Duration < 0 {
		bad("Duration", c.Duration, "must not be negative")
	}
	if c.OperationCount < 0 {
		bad("OperationCount", c.OperationCount, "must not be negative")
	}
	if c.Duration == 0 && c.OperationCount == 0 {
		bad("Duration", c.Duration, "set workload.duration or workload.operationCount (or both)")
	}
	if c.Warmup < 0 {
		bad("Warmup", c.Warmup, "must not be negative")
	}
	if !(c.TargetRate >= 0) || math.IsInf(c.TargetRate, 0) {
		bad("TargetRate", c.TargetRate, "must be a finite number of operations per second, or 0 for a closed loop")
	}
	if c.Interval < 10*time.Millisecond {
		bad("Interval", c.Interval, "must be at least 10ms")
	}
	return errors.Join(errs...)
}

func checkProportions(p map[string]float64) []error {
	var errs []error
	sum := 0.0
	for _, k := range sortedKeys(p) {
		v := p[k]
		if opIndex(k) < 0 {
			errs = append(errs, fmt.Errorf("workload.proportions: unknown operation %q: valid are %s", k, strings.Join(OpNames[:], ", ")))
			continue
		}
		if !(v >= 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("workload.proportions.%s: %v is invalid: must be in [0, 1]", k, v))
			continue
		}
		sum += v
	}
	if len(errs) == 0 && math.Abs(sum-1) > 1e-9 {
		errs = append(errs, fmt.Errorf("workload.proportions: they sum to %.6g; they must sum to 1", sum))
	}
	return errs
}

func opIndex(name string) int {
	for i, n := range OpNames {
		if n == name {
			return i
		}
	}
	return -1
}

func mixNames() []string { return sortedKeys(Mixes) }

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// resolved is a validated Config with the mix's defaults filled in.
type resolved struct {
	Config
	props        [numOps]float64
	distribution string
	scanLength   int
	loadThreads  int
}

func (c Config) resolve() resolved {
	r := resolved{Config: c, distribution: c.RequestDistribution, scanLength: c.ScanLength, loadThreads: c.LoadThreads}
	defDist, defScan := "uniform", 1000
	if m, ok := Mixes[c.Mix]; ok {
		r.props = m.Proportions
		defDist = m.Distribution
		if m.ScanLength > 0 {
			defScan = m.ScanLength
		}
	} else {
		for k, v := range c.Proportions {
			r.props[opIndex(k)] = v
		}
	}
	if c.ReadProportion != nil {
		r.props = withRead(r.props, *c.ReadProportion)
	}
	if r.distribution == "" {
		r.distribution = defDist
	}
	if r.scanLength == 0 {
		r.scanLength = defScan
	}
	if r.loadThreads == 0 {
		r.loadThreads = c.Threads
	}
	return r
}

// specName maps a Config field to the spec field a user wrote.
func specName(field string) string {
	switch field {
	case "RecordCount":
		return "dataset.records (or bound)"
	case "FieldCount":
		return "dataset.fieldCount"
	case "FieldLength":
		return "dataset.fieldLength"
	case "ScanLength":
		return "workload.scanLengthMax"
	case "ReadProportion":
		return "workload.proportions.read"
	}
	if field == "" {
		return field
	}
	return "workload." + strings.ToLower(field[:1]) + field[1:]
}

// withRead sets the read share of props to read; the other operations keep their ratios and
// share the rest (update takes it all when props reads only).
func withRead(props [numOps]float64, read float64) [numOps]float64 {
	rest := 1 - props[opRead]
	out := props
	out[opRead] = read
	if rest <= 0 {
		out = [numOps]float64{}
		out[opRead], out[opUpdate] = read, 1-read
		return out
	}
	for i := range out {
		if opType(i) != opRead {
			out[i] = props[i] / rest * (1 - read)
		}
	}
	return out
}
