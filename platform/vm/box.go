package vm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/images/vmimage"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostcg"
	"github.com/boxbench/boxbench/platform/hostnet"
	"github.com/boxbench/boxbench/platform/hostproc"
	"github.com/boxbench/boxbench/platform/vm/qapi"
)

const (
	stopTimeout = 60 * time.Second
	// defaultShm is /dev/shm's size in a vm-docker container without a memory limit, as on the
	// Docker platform.
	defaultShm int64 = 1 << 30
	// bootTimeout bounds the boot up to the guest agent's answer; TCG boots take ~30 s here.
	bootTimeoutKVM = 90 * time.Second
	bootTimeoutTCG = 4 * time.Minute
	// DefaultMemory is the guest's RAM when the spec sets no memory limit.
	DefaultMemory int64 = 2 << 30
	// captureSize is the sparse capture disk's size: a tar of the data directory is written to it.
	captureSize int64 = 16 << 30
	agentPoll         = 20 * time.Millisecond
	// maxSocketPath is the longest unix socket path Linux takes (sun_path is 108 bytes with its NUL).
	maxSocketPath = 107
)

// Paths inside the guest, the same as in containers (platform.Box*).
const (
	dataMount = platform.BoxDataMount
	dataDir   = platform.BoxDataDir
	runDir    = platform.BoxRunDir
	xferMount = "/mnt/xfer"
	// serverLog is the guest's second serial port: the server's output lands in a host file
	// even when the guest dies.
	serverLog = "/dev/ttyS1"
	// serverGroup is the vm server's cgroup v2 group in the guest (under /sys/fs/cgroup/boxbench).
	serverGroup = "server"
)

// Disk serials: the guest finds each disk by its serial (boxbench-disk), not by probe order.
const (
	serialRoot    = "bbroot"
	serialData    = "bbdata"
	serialXfer    = "bbxfer"
	serialCapture = "bbcapture"
)

// NAT addresses of QEMU's user-mode network.
const (
	natGuest   = "10.0.2.15"
	natGateway = "10.0.2.2"
)

type box struct {
	p     *Platform
	req   platform.Request
	facts map[string]string
	m     marker
	img   vmimage.Image
	accel AccelChoice

	layout  dbms.Layout
	ep      driver.Endpoint
	group   *cgroup.Group
	net     *hostnet.Bridge
	vcpus   int
	ram     int64
	applied resource.Applied
	warns   []platform.Warning

	qmp, qga   *qapi.Client
	consoleLog string
	serverLog  string
	capture    string // host path of the capture disk

	guestGroup string // the server's cgroup v2 directory in the guest

	mu        sync.Mutex
	proc      *hostproc.Proc // QEMU, our child
	serverPID int            // in the guest (-1: a container); 0 once stopped
	down      atomic.Bool
}

func newBox(p *Platform, r platform.Request) *box {
	b := &box{p: p, req: r, facts: map[string]string{"platform": p.name},
		m: newMarker(r.Experiment, r.Run, r.Network == NetworkBridge)}
	b.consoleLog = filepath.Join(r.WorkDir, "console.log")
	b.serverLog = filepath.Join(r.WorkDir, "server.log")
	b.capture = filepath.Join(r.WorkDir, "capture.img")
	b.qmp = qapi.New(filepath.Join(r.WorkDir, "qmp.sock"), qapi.Monitor)
	b.qga = qapi.New(filepath.Join(r.WorkDir, "qga.sock"), qapi.Agent)
	return b
}

func (b *box) provision(ctx context.Context) error {
	r := b.req
	if !filepath.IsAbs(r.WorkDir) {
		return fmt.Errorf("vm: work directory %q is not absolute", r.WorkDir)
	}
	if sock := filepath.Join(r.WorkDir, "qmp.sock"); len(sock) > maxSocketPath {
		return fmt.Errorf("vm: the box's control sockets would be at %s, %d bytes, longer than a unix socket path may be (%d): use a shorter --work-root or experiment name",
			sock, len(sock), maxSocketPath)
	}
	if err := os.MkdirAll(r.WorkDir, 0o755); err != nil {
		return err
	}
	if err := b.m.write(r.WorkDir); err != nil { // before anything outside the work directory
		return err
	}
	tree, err := b.p.trees.Find(ctx, r.DBMS)
	if err != nil {
		return fmt.Errorf("the %s root filesystem: %w", r.DBMS.Name(), err)
	}
	if b.img, err = b.p.images.Find(tree, b.p.variant); err != nil {
		return err
	}
	maps.Copy(b.facts, tree.Facts())
	maps.Copy(b.facts, b.img.Facts())
	b.accel = chooseAccel(ctx, b.img, r.WorkDir)
	b.facts["accel"] = b.accel.Accel
	b.facts["accel_why"] = b.accel.Why
	if b.accel.Emulated() {
		b.facts[platform.FactEmulated] = "true"
		b.warns = append(b.warns, platform.Warning{Code: "emulated", Message: "the guest's CPU is emulated by QEMU's TCG, " +
			"not virtualised (no guest boots under KVM here: the run's accel_why fact and `boxbench doctor` give the trial's output): " +
			"this box's overhead is the emulator's and says nothing about a VM's cost"})
	}
	b.size()
	drives, err := b.prepareDisks(ctx, tree.UID, tree.GID)
	if err != nil {
		return err
	}
	netArgs, err := b.prepareNetwork(ctx)
	if err != nil {
		return err
	}
	if err := b.prepareGroup(); err != nil {
		return err
	}
	if err := b.boot(ctx, drives, netArgs); err != nil {
		return err
	}
	if err := b.pinVCPUs(ctx); err != nil {
		return err
	}
	if err := b.setupGuest(ctx, tree.UID, tree.GID); err != nil {
		return err
	}
	if err := b.applyAndRead(); err != nil {
		return err
	}
	limit, probe := dbms.ReadyTimeout(r.DBMS, platform.ReadyTimeout), 2*time.Second
	if b.accel.Emulated() {
		// A JVM under TCG: Cassandra took over 3 minutes to open its port, and then an
		// authenticated connection (a bcrypt check) more than the usual 2 s probe.
		limit, probe = platform.ReadyTimeoutEmulated, platform.ReadyProbeEmulated
	}
	return platform.WaitReadyFor(ctx, r.DBMS, b.ep, b.proc.Exited(), func() error {
		return fmt.Errorf("QEMU exited (%v); see the console log %s", b.proc.Err(), b.consoleLog)
	}, limit, probe)
}

// size derives vCPUs and RAM from the resources: vCPUs are the cpuset's cores, else cpus rounded
// up, else every host CPU; RAM is the memory limit, else DefaultMemory.
func (b *box) size() {
	l := b.req.Resources
	b.vcpus = runtime.NumCPU()
	switch {
	case l.Cpuset != "":
		if cpus, err := placement.ParseList(l.Cpuset); err == nil && len(cpus) > 0 {
			b.vcpus = len(cpus)
		}
	case l.CPUs > 0:
		b.vcpus = max(1, int(math.Ceil(l.CPUs)))
	}
	b.ram = DefaultMemory
	if l.MemoryBytes > 0 {
		b.ram = l.MemoryBytes
	}
	b.facts["vcpus"] = strconv.Itoa(b.vcpus)
	b.facts["guest_ram_bytes"] = strconv.FormatInt(b.ram, 10)
}

// prepareDisks makes the root overlay, the data disk (blockdev), the transfer disk (the seed or
// an empty data directory, and the configuration files) and the capture disk, and returns their
// QEMU arguments.
func (b *box) prepareDisks(ctx context.Context, uid, gid int) ([]string, error) {
	r := b.req
	w := r.WorkDir
	root := filepath.Join(w, "root.qcow2")
	if _, err := command.Run(ctx, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", b.img.Disk, root); err != nil {
		return nil, err
	}
	cache, aio := diskModes(w)
	b.facts["disk_cache"], b.facts["disk_aio"] = cache, aio
	b.facts["disk_bus"] = "virtio-blk-pci"
	b.facts["root_disk"] = "qcow2 overlay " + root + " on the shared raw base " + b.img.Disk
	args := drive(root, "qcow2", serialRoot, cache, aio, false)
	b.facts["storage"] = r.Storage
	switch r.Storage {
	case StorageRootfs:
		b.facts["storage_backing"] = "the guest's root disk (ext4 in a qcow2 overlay on the host's " + filesystemOf(w) + ")"
	case storage.Tmpfs:
		size := r.StorageOpts.TmpfsSize
		if size == 0 {
			size = storage.DefaultTmpfsSize
		}
		b.facts["storage_backing"] = fmt.Sprintf("tmpfs in the guest's RAM, size=%d", size)
	case storage.Blockdev:
		dev, how, err := b.dataDisk(ctx)
		if err != nil {
			return nil, err
		}
		b.facts["storage_backing"] = how
		args = append(args, drive(dev, "raw", serialData, cache, aio, false)...)
	}
	xfer, err := b.transferDisk(ctx, uid, gid)
	if err != nil {
		return nil, err
	}
	args = append(args, drive(xfer, "raw", serialXfer, "writeback", "threads", true)...)
	f, err := os.Create(b.capture)
	if err != nil {
		return nil, err
	}
	err = f.Truncate(captureSize)
	f.Close()
	if err != nil {
		return nil, err
	}
	args = append(args, drive(b.capture, "raw", serialCapture, "writeback", "threads", false)...)
	return args, nil
}

// drive is a virtio-blk disk with a serial the guest finds it by.
func drive(file, format, serial, cache, aio string, ro bool) []string {
	d := fmt.Sprintf("file=%s,format=%s,if=none,id=%s,cache=%s,aio=%s", qemuEscape(file), format, serial, cache, aio)
	if ro {
		d += ",readonly=on"
	}
	return []string{"-drive", d, "-device", "virtio-blk-pci,drive=" + serial + ",serial=" + serial}
}

// qemuEscape doubles commas, QEMU's option separator, in a value.
func qemuEscape(s string) string { return strings.ReplaceAll(s, ",", ",,") }

// diskModes chooses the data-path cache and aio modes: cache=none (O_DIRECT on the host, the
// guest's flushes reach the device) with native aio where the work directory's filesystem allows
// O_DIRECT; writeback with threads otherwise (a tmpfs work root), which the facts record.
func diskModes(dir string) (cache, aio string) {
	f, err := os.CreateTemp(dir, ".odirect-")
	if err != nil {
		return "writeback", "threads"
	}
	name := f.Name()
	f.Close()
	defer os.Remove(name)
	g, err := os.OpenFile(name, os.O_RDWR|unix.O_DIRECT, 0)
	if err != nil {
		return "writeback", "threads"
	}
	g.Close()
	return "none", "native"
}

func filesystemOf(dir string) string {
	if m, ok := storage.MountOf(dir); ok {
		return m.FSType + " at " + m.Target
	}
	return "filesystem"
}

// dataDisk makes the blockdev storage's disk on the host: the device the user named (checked,
// then formatted) or a sparse raw image file in the work directory, formatted with mkfs
// directly (no loop device).
func (b *box) dataDisk(ctx context.Context) (path, how string, err error) {
	o := b.req.StorageOpts
	fsType := o.BlockdevFS
	if fsType == "" {
		fsType = "ext4"
	}
	mkfs := []string{"mkfs.ext4", "-q", "-F", "-L", serialData}
	if fsType == "xfs" {
		mkfs = []string{"mkfs.xfs", "-q", "-f", "-L", serialData}
	}
	if o.BlockdevDevice != "" {
		chk, err := storage.CheckDevice(ctx, o.BlockdevDevice, o.Protect, o.BlockdevWipe)
		if err != nil {
			return "", "", err
		}
		if _, err := command.Run(ctx, append(mkfs, chk.Real)...); err != nil {
			return "", "", err
		}
		return chk.Real, fmt.Sprintf("the device %s as the guest's data disk (virtio-blk), %s made on the host", chk.Real, fsType), nil
	}
	size := o.BlockdevSize
	if size == 0 {
		size = storage.DefaultBlockdevSize
	}
	img := filepath.Join(b.req.WorkDir, "data.img")
	f, err := os.Create(img)
	if err != nil {
		return "", "", err
	}
	err = f.Truncate(size)
	f.Close()
	if err != nil {
		return "", "", err
	}
	if _, err := command.Run(ctx, append(mkfs, img)...); err != nil {
		return "", "", err
	}
	return img, fmt.Sprintf("a sparse raw image %s (%d bytes) on the host's %s as the guest's data disk (virtio-blk), %s",
		img, size, filesystemOf(b.req.WorkDir), fsType), nil
}

// transferDisk makes a read-only ext4 disk holding data/ (the seed, or nothing) and config/ (the
// files boxbench owns), with mkfs.ext4 -d: the guest copies them into its storage.
func (b *box) transferDisk(ctx context.Context, uid, gid int) (string, error) {
	r := b.req
	dir := filepath.Join(r.WorkDir, "xfer")
	for _, d := range []string{filepath.Join(dir, "data"), filepath.Join(dir, "config")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", err
		}
	}
	if r.Seed != nil {
		if _, err := storage.Restore(ctx, r.Seed.Dir, filepath.Join(dir, "data")); err != nil {
			return "", err
		}
		b.facts["restore"] = "seed copied into the guest from a transfer disk"
	} else {
		b.facts["restore"] = "initialised empty in the guest"
	}
	settings := dbms.Settings{MemoryBytes: r.Resources.MemoryBytes}
	for name, content := range r.DBMS.ConfigFiles(settings) {
		if err := os.WriteFile(filepath.Join(dir, "config", name), content, 0o600); err != nil {
			return "", err
		}
	}
	b.facts["config_hash"] = dbms.TemplateHash(r.DBMS, settings)
	if _, err := command.Run(ctx, "chown", "-R", fmt.Sprintf("%d:%d", uid, gid), dir); err != nil {
		return "", err
	}
	size, err := rootfs.DiskUsage(dir)
	if err != nil {
		return "", err
	}
	img := filepath.Join(r.WorkDir, "xfer.img")
	mb := size*5/4>>20 + 64
	if _, err := command.Run(ctx, "mkfs.ext4", "-q", "-F", "-L", serialXfer, "-d", dir, img, fmt.Sprintf("%dM", mb)); err != nil {
		return "", err
	}
	return img, os.RemoveAll(dir)
}

// prepareNetwork returns the QEMU network arguments: a forwarded port on 127.0.0.1 (nat) or a
// tap on a bridge of the box's own.
func (b *box) prepareNetwork(ctx context.Context) ([]string, error) {
	r := b.req
	port := r.DBMS.DefaultPort()
	b.layout = dbms.Layout{DataDir: dataDir, RunDir: runDir, Listen: natGuest, Port: port}
	b.facts["network"] = r.Network
	dev := []string{"-device", "virtio-net-pci,netdev=n0"}
	if r.Network == NetworkNAT {
		hostPort, err := platform.FreePort()
		if err != nil {
			return nil, err
		}
		b.ep = driver.Endpoint{Host: "127.0.0.1", Port: hostPort}
		b.facts["network_path"] = fmt.Sprintf("QEMU user-mode network (slirp): 127.0.0.1:%d forwarded to the guest's %s:%d", hostPort, natGuest, port)
		return append([]string{"-netdev", fmt.Sprintf("user,id=n0,hostfwd=tcp:127.0.0.1:%d-%s:%d", hostPort, natGuest, port)}, dev...), nil
	}
	br, err := hostnet.MakeBridge(ctx, r.Experiment, r.Run)
	if err != nil {
		return nil, err
	}
	b.net = br
	for _, argv := range [][]string{
		{"ip", "tuntap", "add", "dev", b.m.Tap, "mode", "tap"},
		{"ip", "link", "set", b.m.Tap, "master", br.Name},
		{"ip", "link", "set", b.m.Tap, "up"},
	} {
		if _, err := command.Run(ctx, argv...); err != nil {
			return nil, fmt.Errorf("tap %s: %w", b.m.Tap, err)
		}
	}
	b.layout.Listen = br.BoxIP()
	b.ep = driver.Endpoint{Host: br.BoxIP(), Port: port}
	b.facts["network_path"] = fmt.Sprintf("tap %s on bridge %s (%s), guest address %s (virtio-net): no proxy, no NAT", b.m.Tap, br.Name, br.Gateway, br.Addr)
	return append([]string{"-netdev", "tap,id=n0,ifname=" + b.m.Tap + ",script=no,downscript=no"}, dev...), nil
}

// prepareGroup creates the VMM's host group with CPU bandwidth and cpuset. Memory is the guest's
// RAM (-m), not a group limit: the group would also count QEMU's own memory and kill the VM.
func (b *box) prepareGroup() error {
	l := b.req.Resources.Basic()
	l.MemoryBytes = 0
	g, err := cgroup.Create(b.m.Cgroup, l)
	if err != nil {
		return err
	}
	b.group = g
	b.facts["cgroup"] = b.m.Cgroup
	return nil
}

// boot starts QEMU in the box's group and waits for the guest agent to answer.
func (b *box) boot(ctx context.Context, drives, netArgs []string) error {
	r := b.req
	w := r.WorkDir
	accel := b.accel.Accel
	cpu := b.accel.CPU
	if b.accel.Emulated() {
		accel = "tcg,thread=multi"
	}
	// debug-threads names the vCPU threads ("CPU 0/TCG"), which where the time goes books apart.
	argv := []string{"qemu-system-x86_64", "-name", "boxbench-" + r.Run + ",debug-threads=on", "-accel", accel, "-machine", "q35", "-cpu", cpu,
		"-smp", strconv.Itoa(b.vcpus), "-m", strconv.FormatInt(b.ram>>20, 10),
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-kernel", b.img.Kernel, "-initrd", b.img.Initrd,
		"-append", "root=/dev/vda rw console=ttyS0 init=/boxbench-init quiet panic=-1",
		"-chardev", "file,id=con,path=" + qemuEscape(b.consoleLog), "-serial", "chardev:con",
		"-chardev", "file,id=srv,path=" + qemuEscape(b.serverLog), "-serial", "chardev:srv",
		"-qmp", "unix:" + qemuEscape(filepath.Join(w, "qmp.sock")) + ",server=on,wait=off",
		"-chardev", "socket,id=qga,path=" + qemuEscape(filepath.Join(w, "qga.sock")) + ",server=on,wait=off",
		"-device", "virtio-serial-pci", "-device", "virtserialport,chardev=qga,name=org.qemu.guest_agent.0"}
	argv = append(argv, drives...)
	argv = append(argv, netArgs...)
	b.facts["machine"] = "q35"
	b.facts["cpu_model"] = cpu
	b.facts["qemu_command"] = strings.Join(argv, " ")
	proc, err := hostproc.Start(hostproc.InGroup(b.group.ProcsFiles(), argv), filepath.Join(w, "qemu.log"))
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.proc = proc
	b.mu.Unlock()
	b.facts["qemu_pid"] = strconv.Itoa(proc.Pid())
	timeout := bootTimeoutKVM
	if b.accel.Emulated() {
		timeout = bootTimeoutTCG
	}
	start := time.Now()
	bctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(bctx, 2*time.Second)
		err := b.qga.Do(pctx, "guest-ping", nil, nil)
		pcancel()
		if err == nil {
			break
		}
		select {
		case <-proc.Exited():
			log, _ := os.ReadFile(filepath.Join(w, "qemu.log"))
			return fmt.Errorf("QEMU exited during boot (%v): %s", proc.Err(), strings.TrimSpace(command.Tail(log, 1000)))
		case <-bctx.Done():
			con, _ := os.ReadFile(b.consoleLog)
			return fmt.Errorf("the guest agent did not answer within %s of boot (last error: %v); console:\n%s", timeout, err, command.Tail(con, 1500))
		case <-time.After(250 * time.Millisecond):
		}
	}
	b.facts["boot_seconds"] = fmt.Sprintf("%.1f", time.Since(start).Seconds())
	return nil
}

// pinVCPUs pins vCPU thread i to the cpuset's i-th core (QMP query-cpus-fast gives the threads).
func (b *box) pinVCPUs(ctx context.Context) error {
	if b.req.Resources.Cpuset == "" {
		return nil
	}
	cores, err := placement.ParseList(b.req.Resources.Cpuset)
	if err != nil {
		return err
	}
	var cpus []struct {
		Index    int `json:"cpu-index"`
		ThreadID int `json:"thread-id"`
	}
	if err := b.qmp.Do(ctx, "query-cpus-fast", nil, &cpus); err != nil {
		return err
	}
	var pins []string
	for _, c := range cpus {
		core := cores[c.Index%len(cores)]
		if err := setAffinity(c.ThreadID, core); err != nil {
			return fmt.Errorf("pin vCPU %d (thread %d) to core %d: %w", c.Index, c.ThreadID, core, err)
		}
		pins = append(pins, fmt.Sprintf("vcpu%d→cpu%d", c.Index, core))
	}
	b.facts["vcpu_pinning"] = strings.Join(pins, " ")
	return nil
}

// applyAndRead writes the weights and I/O limits into the VMM's group (on the device of the
// box's disk images) and reads every control back; the RAM is the guest's.
func (b *box) applyAndRead() error {
	dev := hostcg.Device(b.req.WorkDir)
	if b.req.StorageOpts.BlockdevDevice != "" && b.req.Storage == storage.Blockdev {
		dev = deviceNumber(b.req.StorageOpts.BlockdevDevice)
	}
	how := map[string]string{"cpus_cpuset": "cgroup files of the VMM's group " + b.m.Cgroup,
		"vcpus": fmt.Sprintf("-smp %d", b.vcpus), "memory": fmt.Sprintf("guest RAM -m %dM (the VMM's group has no memory limit)", b.ram>>20)}
	if p := b.facts["vcpu_pinning"]; p != "" {
		how["cpuset"] = "vCPU threads pinned " + p
	}
	var warns []platform.Warning
	var err error
	b.applied, warns, err = hostcg.Apply(b.group.Ref, b.req.Resources.Shares(), dev, how)
	b.warns = append(b.warns, warns...)
	if err != nil {
		return err
	}
	b.applied.Limits.MemoryBytes = b.ram
	b.facts["endpoint"] = b.ep.String()
	return nil
}

func (b *box) Endpoint() driver.Endpoint    { return b.ep }
func (b *box) DataDir() string              { return b.layout.DataDir }
func (b *box) Applied() resource.Applied    { return b.applied }
func (b *box) Warnings() []platform.Warning { return slices.Clone(b.warns) }
func (b *box) Facts() map[string]string     { return maps.Clone(b.facts) }

// Observe: the VMM's group and process on this host; the guest's own view through the agent.
func (b *box) Observe() platform.Observation {
	ref := b.group.Ref
	return platform.Observation{Cgroup: &ref, PID: b.proc.Pid(), Parts: b.parts,
		Guest:   &platform.GuestView{Sample: b.sampleGuest, Group: b.guestGroup},
		Missing: []string{"data device I/O on the host: the data directory is inside the guest (the guest's own disk statistics are sampled instead)"}}
}

func (b *box) LogTail(n int) string {
	data, err := os.ReadFile(b.serverLog)
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		data, _ = os.ReadFile(b.consoleLog)
	}
	return command.Tail(data, n)
}

// Teardown stops the server, powers the guest off, kills what is left in the VMM's group,
// removes the group, the tap and the bridge, and the work directory with the disk images.
func (b *box) Teardown(ctx context.Context) error {
	if !b.down.CompareAndSwap(false, true) {
		return nil
	}
	ctx, cancel := platform.TeardownContext(ctx)
	defer cancel()
	var errs []error
	b.mu.Lock()
	proc := b.proc
	b.mu.Unlock()
	if proc != nil {
		errs = append(errs, platform.StopBeforeTeardown(ctx, b.Stop, 30*time.Second))
		qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
		_ = b.qmp.Do(qctx, "quit", nil, nil) // the reply races the socket's close
		qcancel()
		proc.WaitOr(30*time.Second, ctx.Done()) // QEMU drains its disks' in-flight I/O first
	}
	b.qmp.Close()
	b.qga.Close()
	_, err := b.m.Remove(ctx)
	errs = append(errs, err)
	errs = append(errs, os.RemoveAll(b.req.WorkDir))
	return errors.Join(errs...)
}
