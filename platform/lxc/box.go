package lxc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostcg"
	"github.com/boxbench/boxbench/platform/hostnet"
	"github.com/boxbench/boxbench/platform/hostproc"
)

const (
	stopTimeout = 60 * time.Second
	// defaultShm is /dev/shm's size without a memory limit, as on the Docker platform. An
	// application container has no /dev/shm of its own; without one PostgreSQL's initdb picks
	// System V shared memory where native picks POSIX, a difference that is not the box's.
	defaultShm int64 = 1 << 30
)

// Paths inside the container, the same as Docker's (platform.Box*).
const (
	ctrRoot   = platform.BoxRoot
	dataMount = platform.BoxDataMount
	dataDir   = platform.BoxDataDir
	runDir    = platform.BoxRunDir
)

type box struct {
	p      *Platform
	req    platform.Request
	facts  map[string]string
	m      marker
	tree   rootfs.Tree
	layout dbms.Layout
	ep     driver.Endpoint
	group  cgroup.Ref

	store      *storage.Dir // host-side storage (bind, tmpfs, blockdev)
	upper      string       // the overlay's upper layer (the container's own tree)
	dataOnHost string       // host path of the data directory
	device     string
	net        *bridgeNet
	applied    resource.Applied
	warns      []platform.Warning

	mu      sync.Mutex
	proc    *hostproc.Proc // lxc-start -F: the container's monitor, our child
	logPath string
	down    atomic.Bool
}

func newBox(p *Platform, r platform.Request) *box {
	b := &box{p: p, req: r, facts: map[string]string{"platform": Name},
		m: newMarker(r.Experiment, r.Run, filepath.Join(r.WorkDir, "lxc"), false)}
	b.group = cgroup.At(b.m.Cgroup)
	b.logPath = filepath.Join(r.WorkDir, "server.log")
	return b
}

func (b *box) lxc(tool string, args ...string) []string {
	return append([]string{tool, "-n", b.m.Name, "-P", b.m.LXCPath}, args...)
}

func (b *box) provision(ctx context.Context) error {
	r := b.req
	if !filepath.IsAbs(r.WorkDir) {
		return fmt.Errorf("lxc: work directory %q is not absolute (LXC resolves -P literally)", r.WorkDir)
	}
	if r.Network == NetworkBridge {
		b.m = newMarker(r.Experiment, r.Run, b.m.LXCPath, true)
	}
	ctrDir := filepath.Join(b.m.LXCPath, b.m.Name)
	b.upper = filepath.Join(ctrDir, "upper")
	if err := os.MkdirAll(b.upper, 0o755); err != nil {
		return err
	}
	if err := b.m.write(r.WorkDir); err != nil { // before anything outside the work directory
		return err
	}
	tree, err := b.p.trees.Find(ctx, r.DBMS)
	if err != nil {
		return fmt.Errorf("the %s root filesystem: %w", r.DBMS.Name(), err)
	}
	b.tree = tree
	maps.Copy(b.facts, tree.Facts())
	b.versionCheck(ctx)
	mounts, err := b.prepareStorage(ctx)
	if err != nil {
		return err
	}
	b.layout = dbms.Layout{DataDir: dataDir, RunDir: runDir, Listen: "127.0.0.1", Port: r.DBMS.DefaultPort()}
	if r.Network == NetworkHost {
		if b.layout.Port, err = platform.FreePort(); err != nil {
			return err
		}
	} else {
		br, err := hostnet.MakeBridge(ctx, r.Experiment, r.Run)
		if err != nil {
			return err
		}
		b.net = &bridgeNet{Bridge: *br, Veth: b.m.Veth}
		// The server binds the one address the client uses (its veth's), not 0.0.0.0.
		b.layout.Listen = b.net.BoxIP()
	}
	cfg, err := b.config(mounts)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ctrDir, "config"), []byte(cfg), 0o644); err != nil {
		return err
	}
	b.facts["lxc_config"] = filepath.Join(ctrDir, "config")
	if err := b.fillData(ctx); err != nil {
		return err
	}
	if err := b.start(); err != nil {
		return err
	}
	if err := b.applyAndObserve(ctx); err != nil {
		return err
	}
	return platform.WaitReady(ctx, r.DBMS, b.ep, b.proc.Exited(), func() error {
		return fmt.Errorf("lxc-start exited (%v); see the server log", b.proc.Err())
	})
}

// versionCheck records whether native and container run the same server build.
func (b *box) versionCheck(ctx context.Context) {
	host, err := rootfs.HostVersion(ctx, b.tree.ServerPackage)
	switch {
	case err != nil:
		b.warns = append(b.warns, platform.Warning{Code: "version", Message: fmt.Sprintf(
			"%s is not installed natively (%v); the container runs %s", b.tree.ServerPackage, err, b.tree.ServerVersion)})
	case host != b.tree.ServerVersion:
		b.warns = append(b.warns, platform.Warning{Code: "version", Message: fmt.Sprintf(
			"%s is %s natively and %s in the root filesystem (rebuild with `boxbench images build --dbms %s`)",
			b.tree.ServerPackage, host, b.tree.ServerVersion, b.req.DBMS.Name())})
	default:
		b.facts["version_check"] = "native and container both run " + b.tree.ServerPackage + " " + host
	}
}

// prepareStorage makes the data's storage and returns the mount entries that put it and the
// run directory in the container.
func (b *box) prepareStorage(ctx context.Context) ([]string, error) {
	r := b.req
	b.facts["storage"] = r.Storage
	var mounts []string
	shm := defaultShm
	if r.Resources.MemoryBytes > 0 {
		shm = r.Resources.MemoryBytes
	}
	e, err := mountEntry("tmpfs", "dev/shm", "tmpfs", fmt.Sprintf("rw,nosuid,nodev,mode=1777,size=%d,create=dir", shm))
	if err != nil {
		return nil, err
	}
	mounts = append(mounts, e)
	b.facts["shm_bytes"] = fmt.Sprint(shm)
	switch r.Storage {
	case StorageRootfs:
		// The container's own tree: the data directory is written through the overlay into the
		// box's upper layer, like Docker's writable layer.
		b.dataOnHost = filepath.Join(b.upper, dataDir)
		b.facts["storage_backing"] = "the container's root filesystem: overlayfs over the shared tree, upper layer " + b.upper
	default:
		// Not cancellable: Prepare undoes a failed step with the context it was given.
		st, err := storage.Prepare(context.WithoutCancel(ctx), r.Storage, r.WorkDir, r.StorageOpts.Host(r.Storage))
		if err != nil {
			return nil, err
		}
		b.store = st
		for k, v := range st.Facts {
			b.facts["storage_"+k] = v
		}
		b.dataOnHost = filepath.Join(st.Path, "db")
		e, err := mountEntry(st.Path, strings.TrimPrefix(dataMount, "/"), "none", "bind,create=dir")
		if err != nil {
			return nil, err
		}
		mounts = append(mounts, e)
		b.facts["storage_mount"] = "bind " + st.Path + " on " + dataMount
	}
	b.facts["host_data_dir"] = b.dataOnHost
	return mounts, nil
}

func (b *box) config(mounts []string) (string, error) {
	r := b.req
	argv := r.DBMS.StartCommand(b.layout)
	b.facts["command"] = strings.Join(argv, " ")
	b.facts["user"] = fmt.Sprintf("%s (uid %d, gid %d in the root filesystem)", b.tree.User, b.tree.UID, b.tree.GID)
	c := config{Hostname: b.m.Name, Rootfs: "overlay:" + b.tree.Dir + ":" + b.upper, LogFile: filepath.Join(r.WorkDir, "lxc.log"),
		CgroupDir: strings.TrimPrefix(b.m.Cgroup, "/"), Layout: cgroup.HostVersion(),
		Init: argv, UID: b.tree.UID, GID: b.tree.GID, Cwd: "/", Halt: signalName(r.DBMS.StopSignal()),
		Mounts: mounts, Net: b.net, Limits: r.Resources.Basic()}
	c.Limits.CPUWeight = r.Resources.CPUWeight
	return c.render()
}

// fillData writes the data directory into the storage from the host side: the seed (or an
// empty directory initialised in the container with lxc-execute), then the configuration,
// owned by the server's ids in the root filesystem.
func (b *box) fillData(ctx context.Context) error {
	r := b.req
	own := fmt.Sprintf("%d:%d", b.tree.UID, b.tree.GID)
	// The box's own name resolution, as Docker gives every container: debootstrap's minbase tree
	// has no /etc/hosts, and MariaDB's installer must resolve localhost and the host name. The
	// files go into the box's upper layer; the shared tree is never written.
	etc := filepath.Join(b.upper, "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		return err
	}
	hosts := "127.0.0.1\tlocalhost " + b.m.Name + "\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	if b.net != nil {
		hosts += b.net.BoxIP() + "\t" + b.m.Name + "\n"
	}
	for name, content := range map[string]string{"hosts": hosts, "hostname": b.m.Name + "\n"} {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	// The parents are root's and open to the server's user, as on the Docker platform.
	for _, d := range []string{filepath.Join(b.upper, ctrRoot), filepath.Dir(b.dataOnHost)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, d := range []string{filepath.Join(b.upper, runDir), b.dataOnHost} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		if _, err := command.Run(ctx, "chown", own, d); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(b.upper, runDir), 0o755); err != nil {
		return err
	}
	if r.Seed != nil {
		method, err := storage.Restore(ctx, r.Seed.Dir, b.dataOnHost)
		if err != nil {
			return err
		}
		b.facts["restore"] = method + " into the host side of the storage"
	} else if err := b.initialise(ctx); err != nil {
		return err
	}
	settings := dbms.Settings{MemoryBytes: r.Resources.MemoryBytes}
	files := r.DBMS.ConfigFiles(settings)
	for name, content := range files {
		// Only the server's user reads them: they may hold the run's password.
		if err := os.WriteFile(filepath.Join(b.dataOnHost, name), content, 0o600); err != nil {
			return err
		}
	}
	b.facts["config_hash"] = dbms.TemplateHash(r.DBMS, settings)
	_, err := command.Run(ctx, "chown", "-R", own, b.dataOnHost)
	return err
}

// initialise runs the database's init commands in the container (its tools live in the root
// filesystem), as the server's user, with the box's own mounts.
func (b *box) initialise(ctx context.Context) error {
	r := b.req
	b.facts["restore"] = "initialised empty with lxc-execute"
	for _, s := range r.DBMS.InitCommands(b.layout) {
		argv := b.lxc("lxc-execute", "-u", fmt.Sprint(b.tree.UID), "-g", fmt.Sprint(b.tree.GID), "--")
		argv = append(argv, s.Argv...)
		if _, err := command.RunWith(ctx, command.Options{Stdin: strings.NewReader(string(s.Stdin)), Dir: "/"}, argv...); err != nil {
			return fmt.Errorf("initialise %s data directory: %w", r.DBMS.Name(), err)
		}
	}
	return nil
}

// applyAndObserve waits for the server to be in its group, writes the I/O controls, reads every
// control back and sets the endpoint.
func (b *box) applyAndObserve(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids, _ := b.group.Pids()
		if len(pids) > 0 {
			b.facts["server_pid"] = fmt.Sprint(pids[0])
			break
		}
		select {
		case <-b.proc.Exited():
			return errors.New("the container stopped before its server started; see the server log")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no process appeared in the container's group %s within 30s", b.group.Path())
		}
	}
	b.facts["cgroup"] = b.group.Path()
	b.device = hostcg.Device(b.dataOnHost)
	how := map[string]string{"cpus_cpuset_memory_cpu_weight": "LXC cgroup keys in " + b.facts["lxc_config"]}
	io := b.req.Resources.Shares()
	io.CPUWeight = 0 // an LXC key; read back below with the rest
	var warns []platform.Warning
	var err error
	b.applied, warns, err = hostcg.Apply(b.group, io, b.device, how)
	b.warns = append(b.warns, warns...)
	if err != nil {
		return err
	}
	if b.net == nil {
		b.ep = driver.Endpoint{Host: "127.0.0.1", Port: b.layout.Port}
		b.facts["network_path"] = "host network namespace, loopback"
	} else {
		b.ep = driver.Endpoint{Host: b.net.BoxIP(), Port: b.layout.Port}
		b.facts["network_path"] = fmt.Sprintf("veth %s on bridge %s (%s), container address %s: no proxy, no NAT",
			b.net.Veth, b.net.Name, b.net.Gateway, b.net.Addr)
	}
	b.facts["network"] = b.req.Network
	b.facts["endpoint"] = b.ep.String()
	return nil
}

func (b *box) Endpoint() driver.Endpoint    { return b.ep }
func (b *box) DataDir() string              { return b.layout.DataDir }
func (b *box) Applied() resource.Applied    { return b.applied }
func (b *box) Warnings() []platform.Warning { return slices.Clone(b.warns) }
func (b *box) Facts() map[string]string     { return maps.Clone(b.facts) }

// Observe: the container's group on this host and its data in a host directory.
// Its machinery: lxc-start -F, the container's monitor (outside the container's group).
func (b *box) Observe() platform.Observation {
	o := hostcg.Observation(b.group, b.dataOnHost)
	o.Parts = func(context.Context) ([]platform.Part, error) {
		b.mu.Lock()
		proc := b.proc
		b.mu.Unlock()
		if proc == nil {
			return nil, nil
		}
		return []platform.Part{{Component: "lxc-monitor", PID: proc.Pid()}}, nil
	}
	return o
}
