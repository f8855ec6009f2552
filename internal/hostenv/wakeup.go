package hostenv

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WakeupCost is what one round trip between two threads costs when each waits for the other in
// a blocking read: two wake-ups and two sleeps. A client and a database exchange requests and
// replies the same way, so this is the scheduler's share of an operation of a request–reply
// protocol. On a virtual machine the cross-CPU case may include an inter-processor interrupt
// through the hypervisor to a halted virtual CPU: on the development VM it costs ten times the
// same-CPU case (docs/performance.md), which is one reason a client's placement changes its
// CPU per operation.
type WakeupCost struct {
	Rounds int
	// SameCPU: both threads on one CPU. CrossCPU: on two CPUs (zero when only one is usable).
	SameCPU, CrossCPU WakeupRound
}

// WakeupRound is the mean cost of one round trip.
type WakeupRound struct {
	Wall time.Duration // elapsed time per round trip
	CPU  time.Duration // CPU time of both threads per round trip (RUSAGE_THREAD, user+system)
}

// MeasureWakeup ping-pongs a byte between two threads of this process over two pipes for the
// given number of round trips, first with both threads pinned to one CPU, then to two different
// CPUs, and returns the mean cost per round trip. It takes some milliseconds on bare metal and
// tenths of a second where a cross-CPU wake-up is expensive.
func MeasureWakeup(rounds int) (WakeupCost, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return WakeupCost{}, err
	}
	var cpus []int
	for c := 0; c < 1024 && len(cpus) < 2; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return WakeupCost{}, errors.New("no usable cpu")
	}
	w := WakeupCost{Rounds: rounds}
	var err error
	if w.SameCPU, err = pingPong(cpus[0], cpus[0], rounds); err != nil {
		return w, err
	}
	if len(cpus) > 1 {
		if w.CrossCPU, err = pingPong(cpus[0], cpus[1], rounds); err != nil {
			return w, err
		}
	}
	return w, nil
}

// pingPong runs the round trips between a thread on cpu a and one on cpu b. Each thread is
// locked to its goroutine and ends with it, so its cpu mask never reaches other goroutines. The
// reads and writes are ordinary (not raw) system calls: a raw read that blocks keeps its P
// without telling the scheduler, so a garbage collection that stops the world while one side
// waits for the other (itself stopped) waits forever — the whole process hung that way when the
// probe ran beside other goroutines. The scheduler may hand a blocked side's P to another thread
// (sysmon retakes it after about 20 µs), a small cost beside the wake-up measured; GOMAXPROCS is
// raised meanwhile so that two blocked threads leave Ps for the rest of the process.
func pingPong(a, b, rounds int) (WakeupRound, error) {
	if prev := runtime.GOMAXPROCS(0); prev < 3 {
		runtime.GOMAXPROCS(3)
		defer runtime.GOMAXPROCS(prev)
	}
	var ab, ba [2]int
	if err := unix.Pipe2(ab[:], unix.O_CLOEXEC); err != nil {
		return WakeupRound{}, err
	}
	if err := unix.Pipe2(ba[:], unix.O_CLOEXEC); err != nil {
		closeAll(ab[:])
		return WakeupRound{}, err
	}
	// A side that fails closes both write ends, so that the other side's read ends (EOF) too.
	var shutOnce sync.Once
	shut := func() { shutOnce.Do(func() { closeAll([]int{ab[1], ba[1]}) }) }
	defer func() { shut(); closeAll([]int{ab[0], ba[0]}) }()

	type side struct {
		cpu       int
		in, out   int
		first     bool // writes before it reads
		cpuTime   time.Duration
		err       error
		started   time.Time
		completed time.Time
	}
	sides := []*side{{cpu: a, in: ba[0], out: ab[1], first: true}, {cpu: b, in: ab[0], out: ba[1]}}
	var ready, wg sync.WaitGroup
	ready.Add(2)
	start := make(chan struct{})
	abort := false // set before start is closed: a side that could not pin itself stops both
	for _, s := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
			var one unix.CPUSet
			one.Set(s.cpu)
			s.err = unix.SchedSetaffinity(0, &one)
			ready.Done()
			<-start
			if abort {
				return
			}
			var r0, r1 unix.Rusage
			_ = unix.Getrusage(unix.RUSAGE_THREAD, &r0)
			s.started = time.Now()
			if s.err = exchange(s.in, s.out, s.first, rounds); s.err != nil {
				shut()
			}
			s.completed = time.Now()
			_ = unix.Getrusage(unix.RUSAGE_THREAD, &r1)
			s.cpuTime = time.Duration(r1.Utime.Nano() - r0.Utime.Nano() + r1.Stime.Nano() - r0.Stime.Nano())
		}()
	}
	ready.Wait()
	abort = sides[0].err != nil || sides[1].err != nil
	close(start)
	wg.Wait()
	for _, s := range sides {
		if s.err != nil {
			return WakeupRound{}, fmt.Errorf("wake-up probe on cpu %d: %w", s.cpu, s.err)
		}
	}
	wall := sides[0].completed.Sub(sides[0].started)
	return WakeupRound{Wall: wall / time.Duration(rounds),
		CPU: (sides[0].cpuTime + sides[1].cpuTime) / time.Duration(rounds)}, nil
}

// exchange writes and reads one byte per round, in that order if first, else read then write.
func exchange(in, out int, first bool, rounds int) error {
	var b [1]byte
	p := uintptr(unsafe.Pointer(&b[0]))
	for i := 0; i < rounds; i++ {
		for step := 0; step < 2; step++ {
			trap := uintptr(syscall.SYS_READ)
			fd := in
			if (step == 0) == first {
				trap, fd = syscall.SYS_WRITE, out
			}
			for {
				n, _, errno := syscall.Syscall(trap, uintptr(fd), p, 1)
				if errno == syscall.EINTR {
					continue
				}
				if errno != 0 {
					return errno
				}
				if n != 1 {
					return fmt.Errorf("short pipe transfer (%d bytes)", n)
				}
				break
			}
		}
	}
	return nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

// WakeupFacts measures the wake-up cost (2000 round trips each way) as environment entries:
// CPU and wall time per round trip in ns, wakeup_{same,cross}_cpu_{cpu,wall}_ns. It returns
// nothing when the probe fails: values that cannot be measured are left out.
func WakeupFacts() map[string]string {
	w, err := MeasureWakeup(2000)
	if err != nil {
		return nil
	}
	env := map[string]string{
		"wakeup_same_cpu_cpu_ns":  strconv.FormatInt(w.SameCPU.CPU.Nanoseconds(), 10),
		"wakeup_same_cpu_wall_ns": strconv.FormatInt(w.SameCPU.Wall.Nanoseconds(), 10),
	}
	if w.CrossCPU != (WakeupRound{}) {
		env["wakeup_cross_cpu_cpu_ns"] = strconv.FormatInt(w.CrossCPU.CPU.Nanoseconds(), 10)
		env["wakeup_cross_cpu_wall_ns"] = strconv.FormatInt(w.CrossCPU.Wall.Nanoseconds(), 10)
	}
	return env
}

// Describe says what the measurement means for a client's placement, in one line.
func (w WakeupCost) Describe() string {
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3) }
	s := fmt.Sprintf("round trip between two threads (%d): same CPU %s CPU (%s wall)", w.Rounds, us(w.SameCPU.CPU), us(w.SameCPU.Wall))
	if w.CrossCPU == (WakeupRound{}) {
		return s + "; one usable CPU, nothing to compare"
	}
	s += fmt.Sprintf(", across CPUs %s CPU (%s wall)", us(w.CrossCPU.CPU), us(w.CrossCPU.Wall))
	if w.SameCPU.CPU > 0 && w.CrossCPU.CPU > 4*w.SameCPU.CPU {
		s += fmt.Sprintf(": %.0f× — where the client runs relative to the database changes its CPU per "+
			"operation; compare placement.client and placement.clientPolicy (docs/spec.md, docs/performance.md)",
			float64(w.CrossCPU.CPU)/float64(w.SameCPU.CPU))
	}
	return s
}
