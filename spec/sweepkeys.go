package spec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Sweep keys vary a workload or data-set parameter across cells: a load sweep (targetRate,
// threads) draws a throughput–latency curve per platform, a size sweep (records) a scaling
// curve. A key is the dotted path of the field it replaces, as it is written in the file
// (workload.threads is workload: {threads: …}), so one key never means two things: the
// common field threads is the same client-thread count for ycsb, sysbench and fio, while
// targetRate (ycsb, ops/s) and rate (sysbench, transactions/s) stay apart because their files
// keep them apart. The value of a cell replaces the field for the workload the cell runs
// (the top-level one, or the named one when the matrix varies workload).
var SweepKeys = []string{
	"workload.threads", "workload.targetRate", "workload.proportions.read", "workload.requestDistribution",
	"workload.rate", "workload.tableSize", "workload.job.iodepth", "dataset.records",
}

// OfferedLoadKeys are the sweep keys whose value is the load offered to the database (an open
// loop's rate): the report plots throughput against them directly.
var OfferedLoadKeys = []string{"workload.targetRate", "workload.rate"}

// sweepKey says what one sweep key accepts.
type sweepKey struct {
	// kinds: it applies to the workload kinds whose row lists it (WorkloadKind.Sweeps); else
	// to every kind.
	kinds bool
	// Loads says whether the key changes the loaded data set (a new seed per value); the others
	// share one seed across the sweep.
	loads bool
	check func(v string) error
	valid string // what is valid, for messages
}

var (
	wholeRe   = regexp.MustCompile(`^[0-9]+$`)
	decimalRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

// RequestDistributions are the values of ycsb's requestDistribution.
var RequestDistributions = []string{"uniform", "zipfian", "latest", "hotspot"}

func whole(lo, hi int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if !wholeRe.MatchString(v) || err != nil || n < lo || n > hi {
			return fmt.Errorf("out of range")
		}
		return nil
	}
}

func decimal(lo, hi float64, open bool) func(string) error {
	return func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if !decimalRe.MatchString(v) || err != nil || f < lo || f > hi || (open && f == lo) {
			return fmt.Errorf("out of range")
		}
		return nil
	}
}

var sweepKeys = map[string]sweepKey{
	"workload.threads": {check: whole(1, 4096), valid: "a whole number of client threads, 1 to 4096"},
	"workload.targetRate": {kinds: true, check: decimal(MinRate, MaxRate, false),
		valid: "operations/s from 0.001 to 1e9 (a sweep offers load: the generator runs an open loop at each rate), written as digits, e.g. 5000"},
	"workload.proportions.read": {kinds: true, check: decimal(0, 1, false),
		valid: "a fraction from 0 to 1, e.g. 0.95; the mix's other operations keep their ratios and share the rest"},
	"workload.requestDistribution": {kinds: true, check: func(v string) error {
		if !contains(RequestDistributions, v) {
			return fmt.Errorf("not a distribution")
		}
		return nil
	}, valid: strings.Join(RequestDistributions, ", ")},
	"workload.rate": {kinds: true, check: whole(1, 1e9),
		valid: "a whole number of transactions/s above 0 (sysbench's open loop)"},
	"workload.tableSize": {kinds: true, loads: true, check: whole(1, MaxTableSize),
		valid: "a whole number of rows per table, 1 to 2147483647 (sysbench's 32-bit ids)"},
	"workload.job.iodepth": {kinds: true, check: whole(1, 65536),
		valid: "a whole number of I/Os in flight per job, 1 to 65536"},
	"dataset.records": {kinds: true, loads: true, check: whole(1, MaxRecords),
		valid: "a whole number of records, 1 to 1099511627776"},
}

// IsSweepKey reports whether key is a sweep key.
func IsSweepKey(key string) bool { _, ok := sweepKeys[key]; return ok }

// SweepLoads reports whether a sweep key changes the loaded data set.
func SweepLoads(key string) bool { return sweepKeys[key].loads }

// checkSweepValue validates one value of a sweep key; the error says what is valid.
func checkSweepValue(key, v string) error {
	k := sweepKeys[key]
	if err := k.check(v); err != nil {
		return fmt.Errorf("%q is not valid (valid: %s)", v, k.valid)
	}
	return nil
}

// sweepCanonical is the value a sweep value stands for, so "5" and "05" (or "0.5" and
// "0.50") are found to be the same cell.
func sweepCanonical(key, v string) string {
	if f, err := strconv.ParseFloat(v, 64); err == nil && key != "workload.requestDistribution" {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return v
}

// sweepField is the field a sweep key replaces, relative to a workload (path p) or the file.
func sweepField(p, key string) string {
	if rest, ok := strings.CutPrefix(key, "workload."); ok {
		return p + "." + rest
	}
	return key
}

// checkSweep validates the sweep keys of the matrix against the workloads the cells run: the
// key must apply to each one's type, must not also be written in the file (the matrix gives
// every cell its value), and fio's iodepth needs an engine that keeps several I/Os in flight.
func (c *checker) checkSweep(d Dim, where string) {
	e := c.e
	k := sweepKeys[d.Key]
	seen := map[string]string{}
	for _, v := range d.Values {
		if err := checkSweepValue(d.Key, v); err != nil {
			c.put(Problem{Line: d.Line, Field: where + d.Key, Message: err.Error()})
			continue
		}
		cv := sweepCanonical(d.Key, v)
		if prev, dup := seen[cv]; dup && where == "matrix." && prev != v {
			c.put(Problem{Line: d.Line, Field: where + d.Key,
				Message: fmt.Sprintf("values %q and %q are the same %s", prev, v, d.Key)})
		}
		seen[cv] = v
	}
	if d.Key == "dataset.records" {
		if _, set := e.lines["dataset.records"]; set {
			c.add("dataset.records", "the matrix varies dataset.records: leave dataset.records out (each cell takes the matrix's value)")
		}
		if e.Dataset.Bound != "" || e.varies("bound") {
			c.put(Problem{Line: d.Line, Field: where + d.Key,
				Message: "a data set is sized by records or by bound, not both: drop bound or this key"})
		}
	}
	paths := map[string]*Workload{"workload": &e.Workload}
	if e.varies("workload") {
		paths = map[string]*Workload{}
		for _, n := range e.ValuesOf("workload") {
			if w, ok := e.Workloads[n]; ok {
				paths["workloads."+n] = w
			}
		}
	}
	for _, p := range sortedKeys(paths) {
		w := paths[p]
		if k.kinds && !contains(e.vocab.workloadKind(w.Type).Sweeps, d.Key) {
			takes := e.vocab.workloadTypes(func(wk WorkloadKind) bool { return contains(wk.Sweeps, d.Key) })
			c.put(Problem{Line: d.Line, Field: where + d.Key,
				Message: fmt.Sprintf("applies to workload type %s only, but %s is %s", strings.Join(takes, ", "), p, w.Type)})
			continue
		}
		if d.Key == "dataset.records" {
			continue
		}
		field := sweepField(p, d.Key)
		if _, set := e.lines[field]; set {
			c.add(field, "the matrix varies %s: leave %s out (each cell takes the matrix's value)", d.Key, field)
		}
		// What the kind's own section says of the key (fio's iodepth needs an engine that
		// keeps several I/Os in flight).
		if own := e.vocab.workloadKind(w.Type).Own; own != nil && own.CheckSweep != nil && w.Own != nil {
			if msg := own.CheckSweep(w.Own, p, d.Key); msg != "" {
				c.put(Problem{Line: d.Line, Field: where + d.Key, Message: msg})
			}
		}
	}
}

// WorkloadFor returns the workload a cell runs with its sweep keys applied: a copy of
// WorkloadOf(name), with each workload.* key of params replacing its field (a field of the
// kind's own section by the kind, Own.Sweep). The values were
// validated by Parse. Duration, warm-up and interval are never sweep keys, so a caller that
// reads only those may use WorkloadOf.
func (e *Experiment) WorkloadFor(name string, params map[string]string) *Workload {
	w := *e.WorkloadOf(name)
	for _, key := range SweepKeys {
		v, ok := params[key]
		if !ok {
			continue
		}
		if w.Own != nil { // a field of the kind's own section: the kind sets it
			if o, mine := w.Own.Sweep(key, v); mine {
				w.Own = o
				continue
			}
		}
		switch key {
		case "workload.threads":
			w.Threads, _ = strconv.Atoi(v)
		}
	}
	return &w
}

// RecordsOf returns the record count a cell's dataset.records key gives, or 0 when the cell
// has none.
func RecordsOf(params map[string]string) int64 {
	n, _ := strconv.ParseInt(params["dataset.records"], 10, 64)
	return n
}

// sweepAlias names the sweep key a bare or tool-specific name most likely means
// (threads → workload.threads, recordCount → dataset.records), or "".
func sweepAlias(key string) string {
	aliases := map[string]string{"recordcount": "dataset.records", "records": "dataset.records",
		"readproportion": "workload.proportions.read", "iodepth": "workload.job.iodepth",
		"target": "workload.targetRate", "distribution": "workload.requestDistribution"}
	k := strings.ToLower(key)
	if a, ok := aliases[k]; ok {
		return a
	}
	for _, s := range SweepKeys {
		if strings.EqualFold(s[strings.LastIndex(s, ".")+1:], k) {
			return s
		}
	}
	return ""
}
