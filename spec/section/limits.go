package section

import "math"

// The bounds that spec and the workload kinds' own sections share (spec names them too).
const (
	// MaxBytes bounds every size of storage (tmpfs, blockdev, volumeSize, fio file sizes) and
	// of memory (limits.memory, a stress vm worker's bytes): 16 TiB, ext4's largest file and
	// far above any host this runs on.
	MaxBytes = 16 << 40
	// MaxThreads bounds client, load and neighbour worker counts (the client's threads already
	// had this bound): each is a goroutine or a process with buffers of its own.
	MaxThreads = 4096
	// MaxTables bounds sysbench's tables; its ids are 32-bit INTEGERs, so MaxTableSize bounds
	// one table.
	MaxTables    = 10000
	MaxTableSize = math.MaxInt32
	// MinRate and MaxRate bound an open loop's operations/s: below MinRate one operation per
	// worker is due every 1000 s or less often — the schedule of a rate of 1e-300 overflowed
	// (each worker slept ~292 years); above MaxRate the interval between a worker's operations
	// rounds to nothing and the loop runs closed while recorded as open.
	MinRate = 0.001
	MaxRate = 1e9
)
