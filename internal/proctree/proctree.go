// Package proctree reads the host's process tree from /proc: each process's parent, name,
// arguments and threads, for the platforms that name the processes working for a box from
// the box itself (its parent, its children, the proxy that serves its address). OS plumbing:
// it imports no other package of boxbench.
package proctree

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// Proc is one process.
type Proc struct {
	PID, PPID int
	// Comm is the kernel's name of the process (at most 15 bytes); Argv its command line
	// (empty for a kernel thread).
	Comm string
	Argv []string
}

// Tree is a snapshot of the host's processes.
type Tree struct {
	fs    procfs.FS
	procs map[int]Proc
}

// Read takes a snapshot of /proc. Processes that exit while it reads are left out.
func Read() (*Tree, error) { return ReadAt(procfs.DefaultMountPoint) }

// ReadAt takes a snapshot of the proc file system mounted at root.
func ReadAt(root string) (*Tree, error) {
	fs, err := procfs.NewFS(root)
	if err != nil {
		return nil, err
	}
	all, err := fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	t := &Tree{fs: fs, procs: make(map[int]Proc, len(all))}
	for _, p := range all {
		st, err := p.Stat()
		if err != nil {
			continue
		}
		argv, _ := p.CmdLine()
		t.procs[p.PID] = Proc{PID: p.PID, PPID: st.PPID, Comm: st.Comm, Argv: argv}
	}
	return t, nil
}

// Get returns process pid; ok is false when it was not there.
func (t *Tree) Get(pid int) (Proc, bool) {
	p, ok := t.procs[pid]
	return p, ok
}

// Children are the processes whose parent is pid.
func (t *Tree) Children(pid int) []Proc {
	var out []Proc
	for _, p := range t.procs {
		if p.PPID == pid {
			out = append(out, p)
		}
	}
	return out
}

// Find returns the processes for which match is true.
func (t *Tree) Find(match func(Proc) bool) []Proc {
	var out []Proc
	for _, p := range t.procs {
		if match(p) {
			out = append(out, p)
		}
	}
	return out
}

// Threads returns the thread ids of pid with each thread's name (a VMM names its vCPU threads
// "CPU 0/KVM").
func (t *Tree) Threads(pid int) (map[int]string, error) {
	ts, err := t.fs.AllThreads(pid)
	if err != nil {
		return nil, err
	}
	out := make(map[int]string, len(ts))
	for _, th := range ts {
		comm, err := th.Comm()
		if err != nil {
			continue
		}
		out[th.PID] = comm
	}
	return out, nil
}

// Arg returns the value after flag in argv ("-container-ip" → "172.17.0.2"); "" when absent.
func Arg(argv []string, flag string) string {
	for i, a := range argv {
		if a == flag && i+1 < len(argv) {
			return argv[i+1]
		}
		if v, ok := cutFlag(a, flag); ok {
			return v
		}
	}
	return ""
}

func cutFlag(a, flag string) (string, bool) {
	if len(a) > len(flag)+1 && a[:len(flag)] == flag && a[len(flag)] == '=' {
		return a[len(flag)+1:], true
	}
	return "", false
}
