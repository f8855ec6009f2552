package vm

import (
	"context"
	"fmt"
	"regexp"

	"github.com/boxbench/boxbench/internal/proctree"
	"github.com/boxbench/boxbench/platform"
)

// vcpuThread is how QEMU names a vCPU thread: "CPU 0/KVM", "CPU 1/TCG".
var vcpuThread = regexp.MustCompile(`^CPU \d+/(KVM|TCG|HVF|WHPX)$`)

// parts are the VMM's threads inside its group: the vCPU threads (qemu-vcpu: the guest's own
// work, the server's included, emulated under TCG) and the rest at the time of asking
// (qemu-io: the main loop, I/O threads and workers). Threads QEMU starts later stay in the
// group's own figure.
func (b *box) parts(context.Context) ([]platform.Part, error) {
	b.mu.Lock()
	proc := b.proc
	b.mu.Unlock()
	if proc == nil {
		return nil, nil
	}
	pid := proc.Pid()
	tree, err := proctree.Read()
	if err != nil {
		return nil, err
	}
	threads, err := tree.Threads(pid)
	if err != nil {
		return nil, fmt.Errorf("threads of QEMU (pid %d): %w", pid, err)
	}
	vcpu := platform.Part{Component: "qemu-vcpu", PID: pid, InGroup: true}
	io := platform.Part{Component: "qemu-io", PID: pid, InGroup: true}
	for tid, name := range threads {
		if vcpuThread.MatchString(name) {
			vcpu.Threads = append(vcpu.Threads, tid)
		} else {
			io.Threads = append(io.Threads, tid)
		}
	}
	var out []platform.Part
	for _, p := range []platform.Part{vcpu, io} {
		if len(p.Threads) > 0 {
			out = append(out, p)
		}
	}
	return out, nil
}
