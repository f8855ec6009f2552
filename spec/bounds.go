package spec

// Upper bounds of every size, count, rate and duration a spec gives (issue 32): each is what a
// tool can store or what a host can hold, checked when the spec is read — not when an
// allocation, a mount or a disk finds out — naming the field, the value and what is valid.
// docs/spec.md lists them.

import (
	"github.com/boxbench/boxbench/spec/section"
)

const (
	// MaxThreads bounds client, load and neighbour worker counts (section.MaxThreads).
	MaxThreads = section.MaxThreads
	// MaxRecordBytes bounds fieldCount × fieldLength (one record).
	MaxRecordBytes = 16 << 20
	// MaxRecords bounds dataset.records and sysbench's rows (tables × tableSize); sysbench's
	// ids are 32-bit INTEGERs, so MaxTableSize bounds one table.
	MaxRecords   = 1 << 40
	MaxTables    = section.MaxTables
	MaxTableSize = section.MaxTableSize
	// MaxBytes bounds every size of storage and memory (section.MaxBytes).
	MaxBytes = section.MaxBytes
	// MinRate and MaxRate bound an open loop's operations/s (section.MinRate, section.MaxRate).
	MinRate = section.MinRate
	MaxRate = section.MaxRate
	// MinCPUs is the smallest cpus limit: a CFS quota of 1 ms per 100 ms period, the kernel's
	// smallest; below it Docker rounds to "no limit" and cgroups refuse the quota.
	MinCPUs = 0.01
)

// bounds checks the bounds of the fields other checks do not bound.
func (c *checker) bounds() {
	e := c.e
	for _, p := range sortedKeys(e.usedWorkloads()) {
		c.workloadBounds(p, e.usedWorkloads()[p])
	}
	d := e.Dataset
	if d.Records > MaxRecords {
		c.add("dataset.records", "%d is too large (valid: up to %d)", d.Records, int64(MaxRecords))
	}
	if d.FieldCount >= 1 && d.FieldLength >= 1 && int64(d.FieldCount)*int64(d.FieldLength) > MaxRecordBytes {
		c.add("dataset", "fieldCount %d × fieldLength %d = %s per record is too large (valid: at most %s per record)",
			d.FieldCount, d.FieldLength, FormatBytes(int64(d.FieldCount)*int64(d.FieldLength)), FormatBytes(MaxRecordBytes))
	}
	c.size("storageOptions.tmpfs.size", e.StorageOptions.Tmpfs.Size)
	c.size("storageOptions.blockdev.size", e.StorageOptions.Blockdev.Size)
	c.limitBounds("limits", e.Limits)
	for _, n := range sortedKeys(e.Neighbours) {
		nb := e.Neighbours[n]
		if nb == nil {
			continue
		}
		p := "neighbours." + n
		c.limitBounds(p+".limits", nb.Limits)
		w := nb.Workload
		if w.Threads < 0 || w.Threads > MaxThreads {
			c.add(p+".workload.threads", "%d is out of range (valid: 0 to %d workers)", w.Threads, MaxThreads)
		}
		c.ownCheck(section.StageBounds, p+".workload", &w, true)
	}
}

func (c *checker) workloadBounds(p string, w *Workload) {
	if w == nil {
		return
	}
	c.ownCheck(section.StageBounds, p, w, false)
}

// limitBounds: cpus is 0 (no limit) or at least MinCPUs; memory and byte rates at most MaxBytes.
func (c *checker) limitBounds(p string, l Limits) {
	if l.CPUs > 0 && l.CPUs < MinCPUs {
		c.add(p+".cpus", "%g is below the smallest limit (valid: 0 or absent for no limit, or %g to %d cpus)", l.CPUs, MinCPUs, MaxCPUs)
	}
	c.size(p+".memory", l.Memory)
}

// size bounds a size field at MaxBytes.
func (c *checker) size(field string, b Bytes) {
	if msg := section.CheckSize(b); msg != "" {
		c.add(field, "%s", msg)
	}
}
