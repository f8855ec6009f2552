package telemetry

import (
	"bytes"
	"os"
	"strconv"

	"github.com/boxbench/boxbench/internal/cgroup"
)

// maxGroupThreads bounds the threads whose context switches groupSwitches reads each interval
// (a /proc read each): a group with more gives no value rather than slowing every tick.
const maxGroupThreads = 512

// groupSwitches sums the context switches of every thread of a control group's processes
// (/proc/<pid>/task/*/status). A thread that exits takes its count out of the sum; the
// interval it exits in then has no value, as for any counter that went back. It runs in the
// client's process every interval, so it keeps the files open (procFiles).
type groupSwitches struct {
	ref   cgroup.Ref
	proc  string
	files *procFiles
}

func newGroupSwitches(ref cgroup.Ref, rt roots) (*groupSwitches, error) {
	return &groupSwitches{ref: ref, proc: rt.proc, files: newProcFiles()}, nil
}

func (c *groupSwitches) Close() error { return c.files.Close() }

func (c *groupSwitches) name() string { return "context switches of " + c.ref.String() }

func (c *groupSwitches) collect(r reading) error {
	pids, err := c.ref.Pids()
	if err != nil {
		return err
	}
	defer c.files.sweep()
	var vol, invol uint64
	n := 0
	for _, pid := range pids {
		dir := c.proc + "/" + strconv.Itoa(pid) + "/task"
		tids, err := os.ReadDir(dir)
		if err != nil {
			continue // exited
		}
		n += len(tids)
		if n > maxGroupThreads {
			return nil // too many to read each interval: absent
		}
		for _, t := range tids {
			v, i, ok := c.switches(dir + "/" + t.Name() + "/status")
			if ok {
				vol, invol = vol+v, invol+i
			}
		}
	}
	if n == 0 {
		return nil
	}
	r.set("context_switches_voluntary_total", float64(vol))
	r.set("context_switches_involuntary_total", float64(invol))
	return nil
}

var (
	volKey   = []byte("\nvoluntary_ctxt_switches:")
	involKey = []byte("\nnonvoluntary_ctxt_switches:")
)

// switches reads one thread's voluntary and involuntary switch counts from its status file.
func (c *groupSwitches) switches(path string) (vol, invol uint64, ok bool) {
	b, ok := c.files.read(path)
	if !ok {
		return 0, 0, false
	}
	v, ok1 := statusField(b, volKey)
	i, ok2 := statusField(b, involKey)
	return v, i, ok1 && ok2
}

func statusField(b, key []byte) (uint64, bool) {
	at := bytes.Index(b, key)
	if at < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(b[at+len(key):], " \t")
	if end := bytes.IndexByte(rest, '\n'); end >= 0 {
		rest = rest[:end]
	}
	v, err := strconv.ParseUint(string(rest), 10, 64)
	return v, err == nil
}
