package native

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostcg"
	"github.com/boxbench/boxbench/platform/hostproc"
)

const (
	stopTimeout        = 60 * time.Second
	cleanupKillTimeout = 10 * time.Second
)

type box struct {
	req     platform.Request
	facts   map[string]string
	layout  dbms.Layout
	ep      driver.Endpoint
	store   *storage.Dir
	group   *cgroup.Group
	device  string // "major:minor" of the data directory's block device, "" for a tmpfs
	applied resource.Applied
	warns   []platform.Warning

	// netns is the box's network namespace, bridge the bridge it made for itself (network
	// netns; a cluster's node uses the cluster's, which the cluster removes).
	netns, bridge string

	mu      sync.Mutex
	proc    *hostproc.Proc
	logPath string
	down    atomic.Bool // torn down (Teardown ran)
}

func (b *box) provision(ctx context.Context) error {
	r := b.req
	if err := os.MkdirAll(r.WorkDir, 0o755); err != nil {
		return err
	}
	st, err := storage.Prepare(ctx, r.Storage, r.WorkDir, r.StorageOpts.Host(r.Storage))
	if err != nil {
		return err
	}
	b.store = st
	for k, v := range st.Facts {
		b.facts["storage_"+k] = v
	}
	b.facts["storage"] = r.Storage
	// Sockets go to a short directory of their own: a unix socket path is limited to 107 bytes,
	// and the work root is the user's choice.
	runDir := runDirFor(r.WorkDir)
	b.layout = dbms.Layout{DataDir: filepath.Join(st.Path, "db"), RunDir: runDir, Listen: "127.0.0.1"}
	b.facts["host_data_dir"] = b.layout.DataDir
	if r.Node != nil && r.Network == NetworkNetns {
		// On the cluster's bridge, at its own address: the database's own port.
		b.layout.Port = r.DBMS.DefaultPort()
		b.facts["node"] = r.Node.Name
	} else if r.Node != nil {
		// A cluster's node listens where its peers were told it does (platform.Node).
		if b.layout.Port = r.Node.Ports[dbms.PortClient]; b.layout.Port == 0 {
			return fmt.Errorf("node %s has no client port", r.Node.Name)
		}
		b.facts["node"] = r.Node.Name
	} else if b.layout.Port, err = freePort(); err != nil {
		return err
	}
	b.ep = driver.Endpoint{Host: "127.0.0.1", Port: b.layout.Port}
	if r.Network == NetworkNetns {
		if err := b.makeNetns(ctx); err != nil {
			return err
		}
	}
	if r.Network == "unix" {
		sock, err := dbms.UnixSocket(r.DBMS, b.layout)
		if err != nil {
			return err
		}
		b.ep = driver.Endpoint{Unix: sock}
	}
	if err := os.MkdirAll(b.layout.DataDir, 0o700); err != nil {
		return err
	}
	if err := makeRunDir(runDir, r.DBMS.User()); err != nil {
		return err
	}
	if err := chown(ctx, r.DBMS.User(), b.layout.DataDir, runDir); err != nil {
		return err
	}
	if err := b.fillData(ctx); err != nil {
		return err
	}
	settings := dbms.Settings{MemoryBytes: r.Resources.MemoryBytes}
	files := r.DBMS.ConfigFiles(settings)
	for name, content := range files {
		// Only the server's user reads them: they may hold the run's password.
		if err := os.WriteFile(filepath.Join(b.layout.DataDir, name), content, 0o600); err != nil {
			return err
		}
	}
	b.facts["config_hash"] = dbms.TemplateHash(r.DBMS, settings)
	b.facts["network"] = r.Network
	if err := chown(ctx, r.DBMS.User(), b.layout.DataDir); err != nil {
		return err
	}
	// Every control is in place before the server starts: it never runs unlimited.
	if b.group, err = cgroup.Create(CgroupPath(r.Experiment, r.Run), r.Resources.Basic()); err != nil {
		return err
	}
	b.device = hostcg.Device(b.layout.DataDir)
	if b.applied, b.warns, err = hostcg.Apply(b.group.Ref, r.Resources, b.device,
		map[string]string{"cpus_cpuset_memory": "cgroup files of " + b.group.Ref.Path()}); err != nil {
		return err
	}
	if err := b.start(); err != nil {
		return err
	}
	return b.waitReady(ctx)
}

// fillData restores the seed, or initialises an empty data directory.
func (b *box) fillData(ctx context.Context) error {
	r := b.req
	if r.Seed != nil {
		method, err := storage.Restore(ctx, r.Seed.Dir, b.layout.DataDir)
		if err != nil {
			return err
		}
		b.facts["restore"] = method
		return chown(ctx, r.DBMS.User(), b.layout.DataDir)
	}
	b.facts["restore"] = "initialised empty"
	for _, s := range r.DBMS.InitCommands(b.layout) {
		argv := append(asUser(r.DBMS.User()), s.Argv...)
		if _, err := command.RunWith(ctx, command.Options{Stdin: bytes.NewReader(s.Stdin), Dir: "/"}, argv...); err != nil {
			return fmt.Errorf("initialise %s data directory: %w", r.DBMS.Name(), err)
		}
	}
	return nil
}

// runDirFor names the socket directory of the box with work directory dir: short, under the
// system's temporary directory, and derived from dir so that it is the same on every call —
// from its absolute, clean form, so that the cleanup of a crashed experiment, which finds the
// directory from the work root's listing, names the same one as the provision did with a work
// root given as "work" or "/var/tmp/bb/".
func runDirFor(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	h := sha256.Sum256([]byte(dir))
	return filepath.Join(os.TempDir(), "boxbench-"+hex.EncodeToString(h[:6]))
}

// asUser prefixes a command so that it runs as the named system user.
func asUser(name string) []string {
	return []string{"setpriv", "--reuid=" + name, "--regid=" + name, "--init-groups", "--"}
}

func chown(ctx context.Context, name string, paths ...string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("system user %q (installed with the database's Debian package): %w", name, err)
	}
	argv := append([]string{"chown", "-R", u.Uid + ":" + u.Gid}, paths...)
	_, err = command.Run(ctx, argv...)
	return err
}

func (b *box) start() error {
	r := b.req
	argv := r.DBMS.StartCommand(b.layout)
	b.facts["command"] = strings.Join(argv, " ")
	full := hostproc.InGroup(b.group.ProcsFiles(), inNetns(b.netns, append(asUser(r.DBMS.User()), argv...)))
	b.logPath = filepath.Join(r.WorkDir, "server.log")
	proc, err := hostproc.Start(full, b.logPath)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.proc = proc
	b.mu.Unlock()
	return nil
}

func (b *box) waitReady(ctx context.Context) error {
	return platform.WaitReady(ctx, b.req.DBMS, b.ep, b.proc.Exited(), b.proc.Err)
}

func (b *box) Endpoint() driver.Endpoint    { return b.ep }
func (b *box) DataDir() string              { return b.layout.DataDir }
func (b *box) Applied() resource.Applied    { return b.applied }
func (b *box) Warnings() []platform.Warning { return slices.Clone(b.warns) }

// Observe: a host process in a group of its own, its data in a host directory.
func (b *box) Observe() platform.Observation {
	return hostcg.Observation(b.group.Ref, b.layout.DataDir)
}

func (b *box) Facts() map[string]string { return maps.Clone(b.facts) }

func (b *box) LogTail(n int) string {
	if b.logPath == "" {
		return ""
	}
	data, err := os.ReadFile(b.logPath)
	if err != nil {
		return ""
	}
	return command.Tail(data, n)
}

// Exec runs argv as root inside the server's cgroup, in its data directory.
func (b *box) Exec(ctx context.Context, argv []string) ([]byte, error) {
	return command.RunWrapped(ctx, command.Options{Dir: b.layout.DataDir}, hostproc.InGroup(b.group.ProcsFiles(), nil), inNetns(b.netns, argv))
}

// Stop sends the database's clean-shutdown signal and waits for the server to exit.
func (b *box) Stop(ctx context.Context) error {
	b.mu.Lock()
	proc := b.proc
	b.mu.Unlock()
	if proc == nil {
		return nil
	}
	proc.Signal(b.req.DBMS.StopSignal())
	proc.Signal(syscall.SIGCONT) // a stopped server (SIGSTOP, a debugger) acts on it only when continued
	if proc.WaitOr(stopTimeout, ctx.Done()) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s did not stop within %s; killed", b.req.DBMS.Name(), stopTimeout)
}

// Capture copies the stopped data directory to dst.
func (b *box) Capture(ctx context.Context, dst string) error {
	return storage.Capture(ctx, b.layout.DataDir, dst)
}

// Teardown stops the server, kills whatever is left in its cgroup, removes the cgroup,
// unmounts the storage and removes the work directory.
func (b *box) Teardown(ctx context.Context) error {
	if !b.down.CompareAndSwap(false, true) {
		return nil
	}
	ctx, cancel0 := platform.TeardownContext(ctx)
	defer cancel0()
	var errs []error
	errs = append(errs, platform.StopBeforeTeardown(ctx, b.Stop, 20*time.Second))
	if b.group != nil {
		errs = append(errs, b.group.Delete())
	}
	if b.store != nil {
		errs = append(errs, b.store.Release(ctx))
	}
	if b.netns != "" {
		errs = append(errs, removeNetns(ctx, b.netns))
	}
	if b.bridge != "" {
		errs = append(errs, removeBridge(ctx, b.bridge))
	}
	errs = append(errs, os.RemoveAll(b.req.WorkDir), os.RemoveAll(runDirFor(b.req.WorkDir)))
	return errors.Join(errs...)
}

// pidOf is used by tests.
func (b *box) pid() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc == nil {
		return 0
	}
	return b.proc.Pid()
}

// freePort picks the server's port; a variable so that a test can hand out a taken one.
var freePort = platform.FreePort

// Traits: a single box whose client runs in boxbench's process.
func (b *box) Traits() platform.Traits { return platform.Traits{} }
