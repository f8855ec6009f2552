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
// journal's commit thread, kthreads for the rest, from /proc/*/stat).
//
// The total is the root group's cpuacct.usage where the host has the v1 cpuacct controller:
// the scheduler's exact sum over every task, those that exited included. Elsewhere (cgroup v2
// only: its root cpu.stat is the host's CPU modes, interrupts included, not the tasks') it is
// the sum over /proc/*/stat, which misses a process that started and ended between two samples.
// A kernel thread that exits takes its time out of its kind's sum; the interval it exits in
// then has no value for that kind.
type hostTasks struct {
	fs      procfs.FS
	cpuacct string // the root group's cpuacct.usage; "" when the host has none
}

func newHostTasks(fs procfs.FS, rt roots) hostTasks {
	for _, p := range []string{"/fs/cgroup/cpuacct/cpuacct.usage", "/fs/cgroup/cpu,cpuacct/cpuacct.usage"} {
		if _, err := os.Stat(rt.sys + p); err == nil {
			return hostTasks{fs: fs, cpuacct: rt.sys + p}
		}
	}
	return hostTasks{fs: fs}
}

func (hostTasks) name() string { return "host tasks" }

func (c hostTasks) collect(r reading) error {
	procs, err := c.fs.AllProcs()
	if err != nil {
		return err
	}
	var all float64
	kinds := map[string]float64{"ksoftirqd": 0, "kworker": 0, "kthreads": 0}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // exited between the listing and the read
		}
		cpu := float64(st.UTime+st.STime) / userHZ
		all += cpu
		if st.Flags&pfKthread != 0 {
			kinds[kernelThreadKind(st.Comm)] += cpu
		}
	}
	if c.cpuacct != "" {
		if b, err := os.ReadFile(c.cpuacct); err == nil {
			if ns, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
				all = float64(ns) / 1e9
			}
		}
	}
	r.set("tasks_cpu_seconds_total", all)
	for k, v := range kinds {
		r.setLabel("kernel_threads_cpu_seconds_total", k, v)
	}
	return nil
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
