package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/images/image/tarball"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostcg"
)

// removeTimeout bounds each engine call of a teardown.
const removeTimeout = 60 * time.Second

type box struct {
	p       *Platform
	req     platform.Request
	img     image.Image
	facts   map[string]string
	layout  dbms.Layout
	ep      driver.Endpoint
	group   cgroup.Ref
	device  string // "major:minor" of the data's host block device ("" for a tmpfs or unknown)
	applied resource.Applied
	warns   []platform.Warning

	store      *storage.Dir // host-side storage (bind, tmpfs, blockdev)
	hostDir    string       // host path of the storage root when this process can reach it
	dataOnHost string       // host path of the data directory (any storage), "" when not visible
	volume     string       // engine volume (storage=volume)
	// volumeDir is the volume's mountpoint as the engine reports it (fact
	// storage_volume_mountpoint), a host path only where the engine runs on this host.
	volumeDir string

	defaultRuntime string

	// ctx lives as long as the box (the container-wait request); Teardown cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	id       string   // server container
	network  string   // the box's own network (bridge-published, bridge-direct)
	helpers  []string // helper containers still to remove
	exited   chan struct{}
	exitCode int64
	down     atomic.Bool // torn down (Teardown ran)
}

func (b *box) setContainer(id string) {
	b.mu.Lock()
	b.id = id
	b.mu.Unlock()
}

func (b *box) addHelper(id string) {
	b.mu.Lock()
	b.helpers = append(b.helpers, id)
	b.mu.Unlock()
}

func (b *box) removeHelper(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	if err := b.p.Remove(ctx, id); err != nil {
		b.req.Log.Warn("remove helper container", "id", id, "err", err) // Teardown tries again
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, h := range b.helpers {
		if h == id {
			b.helpers = append(b.helpers[:i], b.helpers[i+1:]...)
			break
		}
	}
}

func (b *box) Endpoint() driver.Endpoint    { return b.ep }
func (b *box) Warnings() []platform.Warning { return slices.Clone(b.warns) }

// Observe: the container's group on this host; its data on the host when the storage is a host
// directory, a local volume or the writable layer of a local engine.
func (b *box) Observe() platform.Observation {
	o := hostcg.Observation(b.group, b.dataOnHost)
	o.Parts = b.parts
	return o
}

func (b *box) DataDir() string           { return b.layout.DataDir }
func (b *box) Applied() resource.Applied { return b.applied }

func (b *box) Facts() map[string]string { return maps.Clone(b.facts) }

// Exec runs argv as root inside the server's container (its cgroup, namespaces and mounts), in
// the data directory. A failure is a *command.Error with argv, the exit status and the output.
func (b *box) Exec(ctx context.Context, argv []string) ([]byte, error) {
	return b.p.Exec(ctx, b.id, "root", b.layout.DataDir, argv, nil)
}

// Exec runs argv in container id as user, feeding stdin when it is not nil, and returns its
// standard output.
func (p *Platform) Exec(ctx context.Context, id, user, dir string, argv []string, stdin []byte) ([]byte, error) {
	cr, err := p.engine.ContainerExecCreate(ctx, id, container.ExecOptions{User: user, WorkingDir: dir,
		Cmd: argv, AttachStdout: true, AttachStderr: true, AttachStdin: stdin != nil})
	if err != nil {
		return nil, &command.Error{Argv: argv, Err: fmt.Errorf("create exec: %w", err)}
	}
	hj, err := p.engine.ContainerExecAttach(ctx, cr.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, &command.Error{Argv: argv, Err: fmt.Errorf("attach exec: %w", err)}
	}
	defer hj.Close()
	stop := context.AfterFunc(ctx, hj.Close) // a cancelled context ends the stream
	defer stop()
	if stdin != nil {
		go func() {
			_, _ = hj.Conn.Write(stdin)
			_ = hj.CloseWrite()
		}()
	}
	var stdout, stderr bytes.Buffer
	_, cerr := stdcopy.StdCopy(&stdout, &stderr, hj.Reader)
	if ctx.Err() != nil {
		return stdout.Bytes(), &command.Error{Argv: argv, Output: output(&stdout, &stderr), Err: ctx.Err()}
	}
	// The stream ends a moment before the engine records the exit code.
	for i := 0; ; i++ {
		ins, err := p.engine.ContainerExecInspect(ctx, cr.ID)
		if err != nil {
			return stdout.Bytes(), &command.Error{Argv: argv, Output: output(&stdout, &stderr), Err: err}
		}
		if !ins.Running {
			if ins.ExitCode != 0 {
				return stdout.Bytes(), &command.Error{Argv: argv, Output: output(&stdout, &stderr),
					Err: fmt.Errorf("exit status %d", ins.ExitCode)}
			}
			if cerr != nil {
				return stdout.Bytes(), &command.Error{Argv: argv, Output: output(&stdout, &stderr), Err: cerr}
			}
			return stdout.Bytes(), nil
		}
		if i > 100 {
			return stdout.Bytes(), &command.Error{Argv: argv, Output: output(&stdout, &stderr),
				Err: errors.New("output ended but the process still runs")}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func output(stdout, stderr *bytes.Buffer) string {
	if len(bytes.TrimSpace(stderr.Bytes())) > 0 {
		return command.Tail(stderr.Bytes(), command.TailBytes)
	}
	return command.Tail(stdout.Bytes(), command.TailBytes)
}

// LogTail returns the end of the container's log (the server's stdout and stderr).
func (b *box) LogTail(n int) string {
	b.mu.Lock()
	id := b.id
	b.mu.Unlock()
	return b.p.LogTail(id, n)
}

// LogTail returns up to n bytes of the end of container id's log ("" when there is none).
func (p *Platform) LogTail(id string, n int) string {
	if id == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := p.engine.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true,
		Tail: strconv.Itoa(n/40 + 20)})
	if err != nil {
		return ""
	}
	defer rc.Close()
	var buf bytes.Buffer
	_, _ = stdcopy.StdCopy(&buf, &buf, rc)
	return command.Tail(buf.Bytes(), n)
}

// Stop sends the database's clean-shutdown signal and waits for the container to exit.
func (b *box) Stop(ctx context.Context) error {
	b.mu.Lock()
	id, exited := b.id, b.exited
	b.mu.Unlock()
	return StopContainer(ctx, b.p.engine, id, b.req.DBMS, exited)
}

// StopContainer sends the database's clean-shutdown signal to container id and waits for
// exited to close (the caller's watch of the container's exit). After stopTimeout, or when ctx
// ends, it sends SIGKILL and waits a bounded time more: a wait that never ends (an engine that
// lost the container) must not hold up a teardown, whose forced remove comes next. Other
// platforms of the same engine (swarm's task containers) stop theirs with it. Without a
// container or a watch (nothing was started), or when it has exited, there is nothing to do.
func StopContainer(ctx context.Context, engine client.ContainerAPIClient, id string, d dbms.DBMS, exited <-chan struct{}) error {
	if id == "" || exited == nil {
		return nil
	}
	select {
	case <-exited:
		return nil
	default:
	}
	if err := engine.ContainerKill(ctx, id, SignalName(d.StopSignal())); err != nil && !notRunning(err) {
		return fmt.Errorf("signal container: %w", err)
	}
	kill := func() error {
		_ = engine.ContainerKill(context.WithoutCancel(ctx), id, "KILL")
		select {
		case <-exited:
			return nil
		case <-time.After(removeTimeout):
			return fmt.Errorf("no exit of container %s reported within %s of SIGKILL", id[:min(12, len(id))], removeTimeout)
		}
	}
	select {
	case <-exited:
		return nil
	case <-time.After(stopTimeout):
		return errors.Join(fmt.Errorf("%s did not stop within %s; killed", d.Name(), stopTimeout), kill())
	case <-ctx.Done():
		return errors.Join(ctx.Err(), kill())
	}
}

func notRunning(err error) bool {
	return cerrdefs.IsNotFound(err) || errors.Is(err, context.Canceled) ||
		bytes.Contains([]byte(err.Error()), []byte("is not running"))
}

func SignalName(s syscall.Signal) string { return unix.SignalName(s) }

// Capture copies the stopped server's data directory to dst: with cp from the host directory
// when there is one, otherwise out of the container through the API.
func (b *box) Capture(ctx context.Context, dst string) error {
	if b.hostDir != "" {
		return storage.Capture(ctx, filepath.Join(b.hostDir, "db"), dst)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	rc, _, err := b.p.engine.CopyFromContainer(ctx, b.id, b.layout.DataDir)
	if err != nil {
		return fmt.Errorf("copy data directory out of the container: %w", err)
	}
	defer rc.Close()
	return tarball.Extract(rc, dst, 1)
}

// Teardown stops the server and removes the containers, the volume, the host storage and the
// work directory. Idempotent; every step runs even when an earlier one failed.
func (b *box) Teardown(ctx context.Context) error {
	if !b.down.CompareAndSwap(false, true) {
		return nil
	}
	ctx, cancel0 := platform.TeardownContext(ctx)
	defer cancel0()
	var errs []error
	errs = append(errs, platform.StopBeforeTeardown(ctx, b.Stop, 20*time.Second))
	b.cancel()
	b.mu.Lock()
	ids := append([]string{b.id}, b.helpers...)
	b.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	for _, id := range ids {
		if id != "" {
			errs = append(errs, b.p.Remove(rctx, id))
		}
	}
	errs = append(errs, b.removeNetwork(rctx))
	if b.volume != "" {
		if err := b.p.engine.VolumeRemove(rctx, b.volume, true); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove volume %s: %w", b.volume, err))
		}
	}
	if b.store != nil {
		errs = append(errs, b.store.Release(ctx))
	}
	if left := storage.IsMountPoint(filepath.Join(b.req.WorkDir, "data")); left {
		errs = append(errs, fmt.Errorf("not removing %s: its storage is still mounted", b.req.WorkDir))
	} else {
		errs = append(errs, os.RemoveAll(b.req.WorkDir))
	}
	return errors.Join(errs...)
}

// Settled gives an engine call that creates something a context that a cancellation (Ctrl-C)
// does not cut short: a create the engine completes after the client gave up would leave an
// object nobody knows the id of. Creates are quick; the caller checks ctx right after.
func Settled(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
}

// waitGone waits until the engine no longer knows container id.
func (p *Platform) waitGone(ctx context.Context, id string) error {
	for {
		_, err := p.engine.ContainerInspect(ctx, id)
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("container %s: its removal, already in progress, did not end: %w", id[:min(12, len(id))], ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Remove force-removes a container and kills runtime processes it leaves in its control group
// (killStray); a container that is already gone is not an error.
func (p *Platform) Remove(ctx context.Context, id string) error {
	err := p.engine.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && strings.Contains(err.Error(), "already in progress") {
		// Another client's removal (a teardown cut short by a kill -9) goes on in the engine:
		// wait for it rather than call the container left.
		err = p.waitGone(ctx, id)
	}
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove container %s: %w", id[:min(12, len(id))], err)
	}
	if p.engineIsLocal() {
		pids, err := killStray(id)
		if len(pids) > 0 {
			p.log.Warn("killed processes the removed container left in its control group", "container", id[:min(12, len(id))], "pids", pids)
		}
		if err != nil {
			return fmt.Errorf("container %s removed: %w", id[:min(12, len(id))], err)
		}
	}
	return nil
}

// Traits: a single box whose client runs in boxbench's process.
func (b *box) Traits() platform.Traits { return platform.Traits{} }
