package telemetry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// Part is a process, or some threads of one, that works for a box: its machinery outside the
// box's control group (a container's shim, the docker-proxy of its published port, LXC's
// monitor, a VMM's threads) or inside it (gVisor's Sentry and Gofer). Its CPU is sampled as
// part_cpu_{user,system}_seconds_per_second labelled with Component; parts of one component
// add up.
type Part struct {
	// Component names what the part is, [a-z0-9-]: "containerd-shim", "docker-proxy",
	// "runsc-sentry", "qemu-vcpu".
	Component string
	// PID is the process.
	PID int
	// Threads, when set, restricts the part to these threads of PID (a VMM's vCPU threads);
	// otherwise the whole process counts, its exited threads included.
	Threads []int
}

var componentRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

func (p Part) validate() error {
	var bad []string
	if !componentRe.MatchString(p.Component) {
		bad = append(bad, fmt.Sprintf("component %q is not [a-z0-9-], 1-63 characters", p.Component))
	}
	if p.PID <= 0 {
		bad = append(bad, fmt.Sprintf("pid %d", p.PID))
	}
	for _, t := range p.Threads {
		if t <= 0 {
			bad = append(bad, fmt.Sprintf("thread %d", t))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("part %s: %s", p.Component, strings.Join(bad, ", "))
	}
	return nil
}

// partsCollector reads the CPU time of a box's parts from /proc/<pid>/stat (whole processes)
// or /proc/<pid>/task/<tid>/stat (threads), in the kernel's 10 ms units. A part that is gone
// (it exited) leaves its component's sum, which then goes backwards: that interval's value is
// absent, as for any counter that went back.
type partsCollector struct {
	fs    procfs.FS
	parts []Part
}

func newPartsCollector(parts []Part, rt roots) (*partsCollector, error) {
	var errs []error
	for _, p := range parts {
		errs = append(errs, p.validate())
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	fs, err := procfs.NewFS(rt.proc)
	if err != nil {
		return nil, err
	}
	return &partsCollector{fs: fs, parts: parts}, nil
}

func (c *partsCollector) name() string { return fmt.Sprintf("%d box parts", len(c.parts)) }

func (c *partsCollector) collect(r reading) error {
	user, sys := map[string]float64{}, map[string]float64{}
	for _, p := range c.parts {
		u, s, err := c.partCPU(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // exited: its sum goes back and the interval has no value
		}
		if err != nil {
			return err
		}
		user[p.Component] += u
		sys[p.Component] += s
	}
	for comp, u := range user {
		r.setLabel("part_cpu_user_seconds_total", comp, u)
		r.setLabel("part_cpu_system_seconds_total", comp, sys[comp])
	}
	return nil
}

// partCPU is one part's user and system CPU seconds.
func (c *partsCollector) partCPU(p Part) (user, sys float64, err error) {
	proc, err := c.fs.Proc(p.PID)
	if err != nil {
		return 0, 0, err
	}
	if len(p.Threads) == 0 {
		st, err := proc.Stat()
		if err != nil {
			return 0, 0, err
		}
		return float64(st.UTime) / userHZ, float64(st.STime) / userHZ, nil
	}
	// A thread that exited leaves the sum (one interval without a value, as the sum went
	// back); the process itself must still be there.
	for _, tid := range p.Threads {
		t, err := c.fs.Thread(p.PID, tid)
		if err != nil {
			continue
		}
		st, err := t.Stat()
		if err != nil {
			continue
		}
		user += float64(st.UTime) / userHZ
		sys += float64(st.STime) / userHZ
	}
	return user, sys, nil
}

// pfKthread is the flag of a kernel thread in /proc/<pid>/stat (PF_KTHREAD).
const pfKthread = 0x00200000

// hostTasks reads the CPU time charged to tasks on the host (tasks_cpu_seconds_total: what the
// host's busy CPU holds beyond it is time no task was charged for) and the kernel threads' by
// kind (kernel_threads_cpu_seconds_total, labelled ksoftirqd, kworker, jbd2/<device> for a
// journal's commit thread, kthreads for the rest: their /proc/<pid>/schedstat, the kind from
// /proc/<pid>/stat).
//
// The total is the root group's cpuacct.usage where the host has the v1 cpuacct controller:
// the scheduler's exact sum over every task, those that exited included. Elsewhere (cgroup v2
// only: its root cpu.stat is the host's CPU modes, interrupts included, not the tasks') it is
// the sum over /proc/*/stat, which misses a process that started and ended between two samples.
// A kernel thread that exits takes its time out of its kind's sum; the interval it exits in
// then has no value for that kind.
//
// It runs in the client's process every interval, so it reads as little as it can: a process
// is classified once (kernel thread or not, and its kind), and with cpuacct only the kernel
// threads' stat files are read again, through files kept open (procFiles).
type hostTasks struct {
	proc    string
	cpuacct string         // the root group's cpuacct.usage; "" when the host has none
	kinds   map[int]string // pid → kind, "" for a process that is not a kernel thread
	files   *procFiles
}

func newHostTasks(rt roots) *hostTasks {
	t := &hostTasks{proc: rt.proc, kinds: map[int]string{}, files: newProcFiles()}
	for _, p := range []string{"/fs/cgroup/cpuacct/cpuacct.usage", "/fs/cgroup/cpu,cpuacct/cpuacct.usage"} {
		if _, err := os.Stat(rt.sys + p); err == nil {
			t.cpuacct = rt.sys + p
			break
		}
	}
	return t
}

func (*hostTasks) name() string { return "host tasks" }

func (c *hostTasks) Close() error { return c.files.Close() }

func (c *hostTasks) collect(r reading) error {
	pids, err := c.pids()
	if err != nil {
		return err
	}
	defer c.files.sweep()
	var all float64
	kinds := map[string]float64{"ksoftirqd": 0, "kworker": 0, "kthreads": 0}
	for _, pid := range pids {
		kind, known := c.kinds[pid]
		if known && kind == "" && c.cpuacct != "" {
			continue // not a kernel thread, and the total comes from cpuacct
		}
		if !known {
			st, ok := c.stat(pid)
			if !ok {
				continue // exited between the listing and the read
			}
			if st.flags&pfKthread != 0 {
				kind = kernelThreadKind(st.comm)
			}
			c.kinds[pid] = kind
		}
		if kind != "" {
			// A kernel thread's time from its schedstat, which the kernel renders far more
			// cheaply than stat (three numbers), in nanoseconds.
			ns, ok := c.schedstat(pid)
			if !ok {
				continue
			}
			kinds[kind] += ns
			all += ns
			continue
		}
		st, ok := c.stat(pid)
		if !ok {
			continue
		}
		all += st.cpu
	}
	if c.cpuacct != "" {
		b, err := os.ReadFile(c.cpuacct)
		if err != nil {
			return err
		}
		ns, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", c.cpuacct, err)
		}
		all = float64(ns) / 1e9
	}
	r.set("tasks_cpu_seconds_total", all)
	for k, v := range kinds {
		r.setLabel("kernel_threads_cpu_seconds_total", k, v)
	}
	return nil
}

// pids lists /proc's processes and forgets the kinds of those that are gone (a pid reused by
// a new process is classified again).
func (c *hostTasks) pids() ([]int, error) {
	ents, err := os.ReadDir(c.proc)
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(ents))
	live := make(map[int]bool, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
			live[pid] = true
		}
	}
	for pid := range c.kinds {
		if !live[pid] {
			delete(c.kinds, pid)
		}
	}
	return pids, nil
}

// schedstat is a task's time on a CPU in seconds: the first field of /proc/<pid>/schedstat
// (the scheduler's exact sum, ns).
func (c *hostTasks) schedstat(pid int) (float64, bool) {
	b, ok := c.files.read(c.proc + "/" + strconv.Itoa(pid) + "/schedstat")
	if !ok {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, false
	}
	ns, err := strconv.ParseUint(f[0], 10, 64)
	return float64(ns) / 1e9, err == nil
}

type taskStat struct {
	comm  string
	flags uint64
	cpu   float64 // utime + stime, seconds
}

// stat reads /proc/<pid>/stat: "pid (comm) state ppid … flags(9) … utime(14) stime(15) …".
func (c *hostTasks) stat(pid int) (taskStat, bool) {
	b, ok := c.files.read(c.proc + "/" + strconv.Itoa(pid) + "/stat")
	if !ok {
		return taskStat{}, false
	}
	return parseTaskStat(b)
}

func parseTaskStat(b []byte) (taskStat, bool) {
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return taskStat{}, false
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return taskStat{}, false
	}
	flags, err1 := strconv.ParseUint(f[6], 10, 64)
	ut, err2 := strconv.ParseUint(f[11], 10, 64)
	st, err3 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return taskStat{}, false
	}
	return taskStat{comm: s[open+1 : end], flags: flags, cpu: float64(ut+st) / userHZ}, true
}

// kernelThreadKind groups a kernel thread by its name: "ksoftirqd/1" → ksoftirqd,
// "kworker/u4:2-loop3" → kworker, "jbd2/loop3-8" → jbd2/loop3 (the journal of a device's
// file system), anything else → kthreads.
func kernelThreadKind(comm string) string {
	switch {
	case strings.HasPrefix(comm, "ksoftirqd/"):
		return "ksoftirqd"
	case strings.HasPrefix(comm, "kworker/"):
		return "kworker"
	case strings.HasPrefix(comm, "jbd2/"):
		dev, _, _ := strings.Cut(strings.TrimPrefix(comm, "jbd2/"), "-")
		return "jbd2/" + dev
	}
	return "kthreads"
}
