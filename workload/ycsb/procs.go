package ycsb

import (
	"runtime"
	"sync/atomic"
	"time"
)

// procs sets GOMAXPROCS for one run (Config.ClientProcs) and, in the adaptive mode, raises it
// while the client is busy.
//
// Why the generator starts with one P: its workers spend nearly all their time waiting for
// replies in the network poller. With several Ps, the thread that wakes in epoll_wait with
// two or more replies hands the extra goroutines to an idle P and wakes another thread for
// it (a futex wake and two context switches), which goes back to sleep microseconds later;
// on the 2-vCPU development VM that was 10–25 % of the client's CPU per operation against
// PostgreSQL, and neither throughput nor latency improved (docs/performance.md, "Load
// generator"). One P serves all the workers as long as it has time to: when the process
// used nearly all its Ps' CPU time over an interval (busyShare), the client is about to
// become the bottleneck, and the run gets one more P, up to what the process had. The value
// reached is stored with the result (client_gomaxprocs).
type procs struct {
	restore int // GOMAXPROCS to restore at the end; 0: this run did not set it
	cur     int
	ceiling int           // adaptive mode: the most it may reach; 0: fixed
	cpu     time.Duration // process CPU at the last adapt
	at      time.Time
}

// busyShare is the share of its Ps' CPU time the process must use over an interval for the
// adaptive mode to add a P. Below it one P is not the bottleneck: on the development VM, a
// client using 0.55–0.85 of a core on one P had equal or higher throughput, lower p99 and
// less CPU per operation than the same run on two (docs/performance.md).
const busyShare = 0.9

// procsOwned is held by the run that set GOMAXPROCS; others leave it alone.
var procsOwned atomic.Bool

func startProcs(setting int, cpu time.Duration, now time.Time) *procs {
	p := &procs{cur: runtime.GOMAXPROCS(0), cpu: cpu, at: now}
	if setting < 0 || !procsOwned.CompareAndSwap(false, true) {
		return p
	}
	p.restore = p.cur
	if setting == 0 {
		p.ceiling, setting = p.cur, 1
	}
	p.cur = setting
	runtime.GOMAXPROCS(p.cur)
	return p
}

// adapt adds a P if the process was busy since the last call (adaptive mode only).
func (p *procs) adapt(cpu time.Duration, now time.Time) {
	if p.ceiling == 0 || p.cur >= p.ceiling {
		return
	}
	wall := now.Sub(p.at)
	busy := wall > 0 && float64(cpu-p.cpu) >= busyShare*float64(p.cur)*float64(wall)
	p.cpu, p.at = cpu, now
	if busy {
		p.cur++
		runtime.GOMAXPROCS(p.cur)
	}
}

// stop restores GOMAXPROCS. It returns the value the run ended with.
//
// Setting GOMAXPROCS turns off the runtime's own updates of it (to the CPU affinity mask and
// cgroup quota); if the value before the run was the runtime's default, stop turns them back
// on rather than fixing that value.
func (p *procs) stop() int {
	if p.restore > 0 {
		runtime.SetDefaultGOMAXPROCS()
		if runtime.GOMAXPROCS(0) != p.restore {
			runtime.GOMAXPROCS(p.restore) // the process had its own setting
		}
		procsOwned.Store(false)
		p.restore = 0
	}
	return p.cur
}
