package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/images/image/tarball"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/vm/qapi"
)

// guestEnv is the environment of every guest command (the agent's own is nearly empty).
var guestEnv = []string{"PATH=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8"}

// run runs argv in the guest as root with stdin (nil for none) and returns its stdout; a failure
// is a *command.Error with argv, the exit status and the output, as on the host.
func (b *box) run(ctx context.Context, stdin []byte, argv ...string) ([]byte, error) {
	res, err := b.qga.Exec(ctx, argv, guestEnv, stdin, agentPoll)
	if err != nil {
		return nil, &command.Error{Argv: argv, Err: fmt.Errorf("through the guest agent: %w", err)}
	}
	if res.ExitCode != 0 {
		e := fmt.Errorf("exit status %d", res.ExitCode)
		if res.Signal != 0 {
			e = fmt.Errorf("killed by signal %d", res.Signal)
		}
		return res.Stdout, &command.Error{Argv: argv, Err: e, Output: command.Tail(append(res.Stdout, res.Stderr...), 2000)}
	}
	if res.Truncated {
		return res.Stdout, &command.Error{Argv: argv, Err: errors.New("the guest agent truncated the output")}
	}
	return res.Stdout, nil
}

// setupGuest configures the guest's network, mounts the data's storage, fills the data
// directory from the transfer disk (initialising it when there is no seed), and starts the
// server.
func (b *box) setupGuest(ctx context.Context, uid, gid int) error {
	r := b.req
	addr, gw := natGuest+"/24", natGateway
	if b.net != nil {
		addr, gw = b.net.Addr, b.net.Gateway
	}
	steps := [][]string{
		{"hostname", "boxbench-" + r.Run},
		{"boxbench-net", addr, gw},
		{"mkdir", "-p", dataMount, runDir, xferMount},
	}
	switch r.Storage {
	case storage.Tmpfs:
		size := r.StorageOpts.TmpfsSize
		if size == 0 {
			size = storage.DefaultTmpfsSize
		}
		steps = append(steps, []string{"mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0755", size), "tmpfs", dataMount})
	case "blockdev":
		steps = append(steps, []string{"sh", "-c", `mount "$(boxbench-disk "$1")" "$2"`, "sh", serialData, dataMount})
	}
	own := fmt.Sprintf("%d:%d", uid, gid)
	steps = append(steps,
		[]string{"sh", "-c", `mount -o ro "$(boxbench-disk "$1")" "$2"`, "sh", serialXfer, xferMount},
		[]string{"mkdir", "-p", dataDir},
		[]string{"cp", "-a", xferMount + "/data/.", dataDir + "/"},
		[]string{"chown", "-R", own, dataDir, runDir},
		[]string{"chmod", "0700", dataDir})
	for _, s := range steps {
		if _, err := b.run(ctx, nil, s...); err != nil {
			return fmt.Errorf("prepare the guest: %w", err)
		}
	}
	if r.Seed == nil {
		for _, s := range r.DBMS.InitCommands(b.layout) {
			argv := append([]string{"setpriv", "--reuid=" + strconv.Itoa(uid), "--regid=" + strconv.Itoa(gid), "--init-groups", "--"}, s.Argv...)
			if _, err := b.run(ctx, s.Stdin, argv...); err != nil {
				return fmt.Errorf("initialise %s data directory: %w", r.DBMS.Name(), err)
			}
		}
	}
	for _, s := range [][]string{
		{"cp", "-a", xferMount + "/config/.", dataDir + "/"},
		{"chown", "-R", own, dataDir},
		{"umount", xferMount},
	} {
		if _, err := b.run(ctx, nil, s...); err != nil {
			return fmt.Errorf("prepare the guest: %w", err)
		}
	}
	argv := r.DBMS.StartCommand(b.layout)
	b.facts["command"] = strings.Join(argv, " ")
	if b.p.docker() {
		return b.startContainer(ctx, argv)
	}
	start := append([]string{"boxbench-start", serverLog, strconv.Itoa(uid), strconv.Itoa(gid), serverGroup, dataDir}, argv...)
	out, err := b.run(ctx, nil, start...)
	if err != nil {
		return fmt.Errorf("start %s in the guest: %w", r.DBMS.Name(), err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("start %s in the guest: no pid in %q", r.DBMS.Name(), out)
	}
	b.mu.Lock()
	b.serverPID = pid
	b.mu.Unlock()
	b.facts["server_pid_in_guest"] = strconv.Itoa(pid)
	b.guestGroup = "/sys/fs/cgroup/boxbench/" + serverGroup
	return nil
}

// startContainer runs the server in a container of the guest's dockerd (vm-docker): the
// database's image loaded into the guest when its image was built, the guest's network
// namespace, the data in the container's writable layer (overlay: copied in with docker cp
// before the start) or in a guest directory bound in (bind). The container's output goes to the
// guest's second serial port through `docker logs -f`.
func (b *box) startContainer(ctx context.Context, argv []string) error {
	r := b.req
	ctr := b.container()
	if _, err := b.run(ctx, nil, "boxbench-dockerd"); err != nil {
		return fmt.Errorf("start dockerd in the guest: %w", err)
	}
	if out, err := b.run(ctx, nil, "docker", "version", "--format", "{{.Server.Version}}"); err == nil {
		b.facts["docker_in_guest"] = "dockerd " + strings.TrimSpace(string(out)) +
			" (Debian docker.io; --bridge=none --iptables=false), container on the guest's network (--network host)"
	}
	shm := defaultShm
	if r.Resources.MemoryBytes > 0 {
		shm = r.Resources.MemoryBytes
	}
	sig := strings.TrimPrefix(unix.SignalName(r.DBMS.StopSignal()), "SIG")
	create := []string{"docker", "create", "--name", ctr, "--label", "boxbench=1", "--network", "host",
		// By name: dockerd's `cp -a` resolves the container's user through its passwd file and
		// fails on a numeric uid:gid.
		"--user", b.img.Tree.User, "--stop-signal", sig, "--stop-timeout", strconv.Itoa(int(stopTimeout.Seconds())),
		"--shm-size", strconv.FormatInt(shm, 10), "-v", runDir + ":" + runDir, "-w", "/"}
	if r.Storage == StorageBind {
		create = append(create, "-v", dataMount+":"+dataMount)
		b.facts["storage_backing"] = "a directory of the guest's root disk (ext4 in a qcow2 overlay) bound into the container"
	} else {
		b.facts["storage_backing"] = "the container's writable layer (dockerd's overlay2 on the guest's root disk)"
	}
	create = append(append(create, b.img.DockerImage), argv...)
	b.facts["docker_create"] = strings.Join(create, " ")
	if _, err := b.run(ctx, nil, create...); err != nil {
		return fmt.Errorf("create the container in the guest: %w", err)
	}
	if r.Storage == StorageOverlay {
		// The data directory goes into the container's layer; the guest's staging copy goes away.
		for _, s := range [][]string{{"docker", "cp", "-a", platform.BoxRoot + "/.", ctr + ":" + platform.BoxRoot}, {"rm", "-rf", dataDir}} {
			if _, err := b.run(ctx, nil, s...); err != nil {
				return fmt.Errorf("copy the data directory into the container's layer: %w", err)
			}
		}
		b.facts["restore"] += ", then docker cp into the container's layer"
	}
	if _, err := b.run(ctx, nil, "docker", "start", ctr); err != nil {
		return fmt.Errorf("start the container in the guest: %w", err)
	}
	if _, err := b.run(ctx, nil, "boxbench-start", serverLog, "0", "0", "logs", "/", "docker", "logs", "-f", ctr); err != nil {
		return fmt.Errorf("follow the container's output: %w", err)
	}
	out, err := b.run(ctx, nil, "sh", "-c", `cut -d: -f3 "/proc/$(docker inspect -f '{{.State.Pid}}' "$1")/cgroup"`, "sh", ctr)
	if err != nil {
		return fmt.Errorf("the container's group in the guest: %w", err)
	}
	b.guestGroup = "/sys/fs/cgroup" + strings.TrimSpace(string(out))
	b.facts["cgroup_in_guest"] = b.guestGroup
	b.mu.Lock()
	b.serverPID = -1 // a container: stopped with docker stop
	b.mu.Unlock()
	return nil
}

// container is the vm-docker box's container name in the guest.
func (b *box) container() string { return "bb-" + b.req.Run }

// Exec runs argv as root in the guest (vm-docker: in the container), in the data directory,
// through the agent.
func (b *box) Exec(ctx context.Context, argv []string) ([]byte, error) {
	prefix := []string{"env", "-C", b.layout.DataDir, "--"}
	if b.p.docker() {
		prefix = []string{"docker", "exec", "-u", "0", "-w", b.layout.DataDir, b.container()}
	}
	out, err := b.run(ctx, nil, append(prefix, argv...)...)
	if ce := (*command.Error)(nil); errors.As(err, &ce) {
		ce.Argv = argv
	}
	return out, err
}

// Stop sends the server its clean-shutdown signal in the guest, waits for it to exit and flushes
// the guest's file systems; the guest keeps running for Capture.
func (b *box) Stop(ctx context.Context) error {
	b.mu.Lock()
	pid, proc := b.serverPID, b.proc
	b.mu.Unlock()
	if pid == 0 || proc == nil {
		return nil
	}
	select {
	case <-proc.Exited():
		return nil
	default:
	}
	sig := strings.TrimPrefix(unix.SignalName(b.req.DBMS.StopSignal()), "SIG")
	sctx, cancel := context.WithTimeout(ctx, stopTimeout+30*time.Second)
	defer cancel()
	stop := []string{"boxbench-stop", strconv.Itoa(pid), sig, strconv.Itoa(int(stopTimeout.Seconds()))}
	if b.p.docker() {
		stop = []string{"docker", "stop", "-t", strconv.Itoa(int(stopTimeout.Seconds())), b.container()}
	}
	_, err := b.run(sctx, nil, stop...)
	if err == nil {
		_, err = b.run(sctx, nil, "sync")
	}
	if err == nil {
		b.mu.Lock()
		b.serverPID = 0
		b.mu.Unlock()
	}
	return err
}

// Capture copies the stopped server's data directory out of the guest: the guest writes a tar
// of it onto the capture disk, the host reads the disk as a tar stream and extracts it with the
// checks of package tarball.
func (b *box) Capture(ctx context.Context, dst string) error {
	script := `tar -C "$1" -cf "$(boxbench-disk "$2")" . && sync`
	if b.p.docker() { // out of the (stopped) container first
		script = `rm -rf /boxbench/capture && docker cp -a "$3:$1/." /boxbench/capture && tar -C /boxbench/capture -cf "$(boxbench-disk "$2")" . && sync`
	}
	if _, err := b.run(ctx, nil, "sh", "-c", script, "sh", dataDir, serialCapture, b.container()); err != nil {
		return fmt.Errorf("capture the data directory: %w", err)
	}
	f, err := os.Open(b.capture)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return tarball.Extract(f, dst, 0)
}

// guestProcFiles and guestGroupFiles are what the guest view reads (GuestView.Sample).
var (
	guestProcFiles = []string{"/proc/stat", "/proc/meminfo", "/proc/vmstat", "/proc/loadavg", "/proc/diskstats",
		"/proc/pressure/cpu", "/proc/pressure/memory", "/proc/pressure/io"}
	guestGroupFiles = []string{"cpu.stat", "memory.current", "memory.stat", "memory.events", "memory.swap.current",
		"io.stat", "cpu.pressure", "memory.pressure", "io.pressure", "pids.current"}
)

// sampleGuest reads the guest's own view for telemetry with the agent's file calls (no process
// is started in the guest, which matters in a saturated, emulated one); a file the guest does
// not have (no PSI, a controller not enabled) is left out.
func (b *box) sampleGuest(ctx context.Context) ([]byte, error) {
	var out bytes.Buffer
	files := slices.Clone(guestProcFiles)
	for _, f := range guestGroupFiles {
		files = append(files, b.guestGroup+"/"+f)
	}
	for _, f := range files {
		data, err := b.qga.ReadFile(ctx, f, 1<<20)
		if qe := (*qapi.Error)(nil); errors.As(err, &qe) {
			continue // the agent could not open it: the guest does not offer it
		}
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "==> %s <==\n", f)
		out.Write(data)
	}
	return out.Bytes(), nil
}

// Traits: a single box whose client runs in boxbench's process; emulated under TCG.
func (b *box) Traits() platform.Traits { return platform.Traits{Emulated: b.accel.Emulated()} }
