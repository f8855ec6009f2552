package docker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/go-connections/nat"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostcg"
)

const (
	stopTimeout = 60 * time.Second
	// defaultShm is /dev/shm's size when there is no memory limit. The engine's default (64 MiB)
	// is smaller than the host's and PostgreSQL's parallel queries use it; with a memory limit
	// /dev/shm is as large as the limit (tmpfs pages are charged to the box either way).
	defaultShm int64 = 1 << 30
)

func (b *box) provision(ctx context.Context) error {
	r := b.req
	if err := os.MkdirAll(r.WorkDir, 0o755); err != nil {
		return err
	}
	im, err := b.p.Image(ctx, r.DBMS)
	if err != nil {
		return err
	}
	b.img = im
	for k, v := range im.Facts() {
		b.facts[k] = v
	}
	b.versionCheck(ctx)
	if err := b.engineFacts(ctx); err != nil {
		return err
	}
	b.layout = dbms.Layout{DataDir: dataDir, RunDir: runDir, Listen: "0.0.0.0", Port: r.DBMS.DefaultPort()}
	if r.Node != nil {
		b.facts["node"] = r.Node.Name
	}
	if r.Network == NetworkHost && r.Node != nil {
		// A cluster's node listens where its peers were told it does (platform.Node).
		b.layout.Listen = "127.0.0.1"
		if b.layout.Port = r.Node.Ports[dbms.PortClient]; b.layout.Port == 0 {
			return fmt.Errorf("node %s has no client port", r.Node.Name)
		}
	} else if r.Network == NetworkHost {
		b.layout.Listen = "127.0.0.1"
		if b.layout.Port, err = platform.FreePort(); err != nil {
			return err
		}
	}
	mounts, err := b.prepareStorage(ctx)
	if err != nil {
		return err
	}
	var seed string
	if r.Seed != nil {
		seed = r.Seed.Dir
	} else if seed, err = b.initialise(ctx); err != nil {
		return err
	}
	settings := dbms.Settings{MemoryBytes: r.Resources.MemoryBytes}
	files := r.DBMS.ConfigFiles(settings)
	b.facts["config_hash"] = dbms.TemplateHash(r.DBMS, settings)
	if b.hostDir != "" {
		if err := b.restoreHost(ctx, seed, files); err != nil {
			return err
		}
	}
	if err := b.create(ctx, mounts); err != nil {
		return err
	}
	if err := b.copyIn(ctx, seed, files); err != nil {
		return err
	}
	if err := b.start(ctx); err != nil {
		return err
	}
	return b.waitReady(ctx)
}

// versionCheck records whether native and container run the same server version
// (VersionCheck).
func (b *box) versionCheck(ctx context.Context) {
	warns, fact := VersionCheck(ctx, b.img, b.req.Log)
	b.warns = append(b.warns, warns...)
	if fact != "" {
		b.facts["version_check"] = fact
	}
}

// VersionCheck returns the image's own warnings and whether native and container run the same
// server version: a difference is a warning on the run, not a failure (a user-named image
// differs by design); the same version is the returned fact.
func VersionCheck(ctx context.Context, img image.Image, log *slog.Logger) ([]platform.Warning, string) {
	var warns []platform.Warning
	for i, w := range img.Warnings {
		warns = append(warns, platform.Warning{Code: "image_" + strconv.Itoa(i), Message: w})
	}
	err := image.CheckNative(ctx, img)
	if ctx.Err() != nil {
		return warns, "" // the provision is being cancelled
	}
	if err != nil {
		log.Warn("server versions differ", "err", err)
		return append(warns, platform.Warning{Code: "version", Message: err.Error()}), ""
	}
	return warns, "native and image both run " + img.ServerPackage + " " + img.ServerVersion
}

func (b *box) engineFacts(ctx context.Context) error {
	facts, info, err := b.p.EngineFacts(ctx)
	if err != nil {
		return err
	}
	for k, v := range facts {
		b.facts[k] = v
	}
	b.defaultRuntime = info.DefaultRuntime
	name := b.req.Runtime
	if name == "" {
		name = info.DefaultRuntime
	}
	rt := describeRuntime(name, info.Runtimes)
	if err := rt.check(b.req.Choice); err != nil {
		return err
	}
	for k, v := range rt.facts(b.p.engineIsLocal()) {
		b.facts[k] = v
	}
	b.warns = append(b.warns, rt.warnings(b.req.Choice)...)
	return nil
}

// EngineFacts are the engine's facts for a box's environment (version, API, host, cgroup
// driver, storage driver and its backing filesystem), with the engine's info.
func (p *Platform) EngineFacts(ctx context.Context) (map[string]string, system.Info, error) {
	info, err := p.engine.Info(ctx)
	if err != nil {
		return nil, info, fmt.Errorf("container engine: %w", err)
	}
	f := map[string]string{"engine": info.ServerVersion, "engine_api": p.engine.ClientVersion(),
		"engine_host": p.engine.DaemonHost(), "engine_cgroup": info.CgroupDriver + " v" + info.CgroupVersion,
		"storage_driver": info.Driver}
	for _, kv := range info.DriverStatus {
		if kv[0] == "Backing Filesystem" {
			f["storage_driver_backing"] = kv[1]
		}
	}
	return f, info, nil
}

// prepareStorage makes the storage and returns the container's mounts.
func (b *box) prepareStorage(ctx context.Context) ([]mount.Mount, error) {
	r := b.req
	switch r.Storage {
	case StorageOverlay:
		b.facts["storage"] = StorageOverlay
		b.facts["storage_backing"] = "container writable layer (" + b.facts["storage_driver"] + " on " + b.facts["storage_driver_backing"] + ")"
		return nil, nil
	case StorageVolume:
		cctx, cancel := Settled(ctx)
		defer cancel()
		v, err := b.p.engine.VolumeCreate(cctx, volume.CreateOptions{Name: ObjectName(r, "data"),
			Driver: "local", Labels: Labels(r, "data")})
		if err != nil {
			return nil, fmt.Errorf("create volume: %w", err)
		}
		b.volume = v.Name
		b.facts["storage"] = StorageVolume
		b.facts["storage_volume"] = v.Name
		b.facts["storage_volume_driver"] = v.Driver
		b.facts["storage_volume_mountpoint"] = v.Mountpoint
		b.volumeDir = v.Mountpoint
		b.facts["storage_mount"] = "volume " + v.Name + " on " + dataMount
		// The local driver keeps the volume in a host directory: restore there with the same cp
		// as every host-side storage when this process can see it. Otherwise copy through the API.
		if fi, err := os.Stat(v.Mountpoint); err == nil && fi.IsDir() && v.Driver == "local" && !b.p.forceVolumeCopy {
			b.hostDir = v.Mountpoint
		}
		return []mount.Mount{{Type: mount.TypeVolume, Source: v.Name, Target: dataMount}}, nil
	case StorageBind, StorageTmpfs, StorageBlock:
		if r.Storage == StorageTmpfs {
			b.facts["storage_tmpfs"] = tmpfsChoice
		}
		// Not cancellable: storage.Prepare undoes a failed step with the context it was given, so a
		// cancelled one would leave its loop device attached. Its steps are short.
		st, err := storage.Prepare(context.WithoutCancel(ctx), r.Storage, r.WorkDir, r.StorageOpts.Host(r.Storage))
		if err != nil {
			return nil, err
		}
		b.store = st
		for k, v := range st.Facts {
			b.facts["storage_"+k] = v
		}
		b.facts["storage"] = r.Storage
		b.hostDir = st.Path
		b.facts["storage_mount"] = "bind " + st.Path + " on " + dataMount
		return []mount.Mount{{Type: mount.TypeBind, Source: st.Path, Target: dataMount,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}}}, nil
	}
	return nil, fmt.Errorf("docker does not support storage %q", r.Storage)
}

// create makes the server container (not started).
func (b *box) create(ctx context.Context, mounts []mount.Mount) error {
	r := b.req
	argv := r.DBMS.StartCommand(b.layout)
	b.facts["command"] = strings.Join(argv, " ")
	b.facts["user"] = fmt.Sprintf("%s (uid %d, gid %d in the image)", b.img.User, b.img.UID, b.img.GID)
	port := nat.Port(strconv.Itoa(b.layout.Port) + "/tcp")
	cfg := &container.Config{Image: b.img.ID, Cmd: argv, User: r.DBMS.User(), WorkingDir: "/",
		Labels: Labels(r, "server"), StopSignal: SignalName(r.DBMS.StopSignal())}
	shm := defaultShm
	lim := r.Resources
	if lim.MemoryBytes > 0 {
		shm = lim.MemoryBytes
	}
	hc := &container.HostConfig{Mounts: mounts, Runtime: r.Runtime, ShmSize: shm,
		Resources: container.Resources{NanoCPUs: int64(lim.CPUs * 1e9), CpusetCpus: lim.Cpuset, Memory: lim.MemoryBytes}}
	if lim.CPUWeight > 0 {
		hc.Resources.CPUShares = int64(cgroup.SharesOf(lim.CPUWeight)) // the engine converts to cpu.weight on v2
	}
	b.facts["shm_bytes"] = strconv.FormatInt(shm, 10)
	var netCfg *network.NetworkingConfig
	switch r.Network {
	case NetworkHost:
		hc.NetworkMode = "host"
	case NetworkPublished:
		if err := b.joinNetwork(ctx, cfg, &netCfg); err != nil {
			return err
		}
		hc.NetworkMode = container.NetworkMode(b.netMode())
		cfg.ExposedPorts = nat.PortSet{port: {}}
		// HostPort "" lets the engine pick a free port atomically; it is read back after start.
		hc.PortBindings = nat.PortMap{port: {{HostIP: "127.0.0.1", HostPort: ""}}}
	case NetworkDirect:
		if err := b.joinNetwork(ctx, cfg, &netCfg); err != nil {
			return err
		}
		hc.NetworkMode = container.NetworkMode(b.netMode())
		cfg.ExposedPorts = nat.PortSet{port: {}}
	default:
		return fmt.Errorf("docker does not support network %q", r.Network)
	}
	b.facts["network"] = r.Network
	name := ObjectName(r, "server")
	cctx, cancel := Settled(ctx)
	defer cancel()
	c, err := b.p.engine.ContainerCreate(cctx, cfg, hc, netCfg, nil, name)
	if err != nil {
		return fmt.Errorf("create container %s: %w", name, err)
	}
	b.setContainer(c.ID)
	if err := ctx.Err(); err != nil {
		return err
	}
	b.facts["container"] = name
	b.facts["container_id"] = c.ID
	return nil
}

// WatchExit asks the engine to report container id's exit (cond) and returns a channel that
// closes when it comes, after *code holds the exit status (-1 when the wait itself failed). The
// wait lives as long as ctx. Other platforms of the same engine (swarm's task containers) watch
// theirs with it.
func WatchExit(ctx context.Context, engine client.ContainerAPIClient, id string, cond container.WaitCondition, code *int64) chan struct{} {
	waitC, errC := engine.ContainerWait(ctx, id, cond)
	exited := make(chan struct{})
	go func() {
		select {
		case w := <-waitC:
			*code = w.StatusCode
		case <-errC:
			*code = -1
		}
		close(exited)
	}()
	return exited
}

// start starts the container and reads back what the kernel and the engine hold: the cgroup
// and its limits, the runtime, the endpoint.
func (b *box) start(ctx context.Context) error {
	// Waiting for the next exit is registered before the start, so no exit can be missed.
	exited := WatchExit(b.ctx, b.p.engine, b.id, container.WaitConditionNextExit, &b.exitCode)
	b.mu.Lock()
	b.exited = exited
	b.mu.Unlock()
	if err := b.p.engine.ContainerStart(ctx, b.id, container.StartOptions{}); err != nil {
		// Nothing runs, so no exit will come: Stop must not wait for one (the wait request
		// ends with b.ctx in Teardown). Before this, a failed start made the undo hang.
		b.mu.Lock()
		b.exited = nil
		b.mu.Unlock()
		return fmt.Errorf("start container %s: %w", b.facts["container"], err)
	}
	ins, err := b.p.engine.ContainerInspect(ctx, b.id)
	if err != nil {
		return fmt.Errorf("inspect container: %w", err)
	}
	b.facts["data_dir"] = b.layout.DataDir
	b.dataOnHost = b.hostDataDir(ins)
	b.facts["host_data_dir"] = b.dataOnHost
	runtime := ins.HostConfig.Runtime
	if runtime == "" {
		runtime = b.defaultRuntime
	}
	b.facts["runtime"] = runtime
	if ins.State == nil || ins.State.Pid == 0 {
		return fmt.Errorf("container %s is not running after start (%+v)", b.facts["container"], ins.State)
	}
	b.facts["server_pid"] = strconv.Itoa(ins.State.Pid)
	if b.group, err = cgroup.OfProcess(ins.State.Pid); err != nil {
		return err
	}
	b.facts["cgroup"] = b.group.Path()
	// CPU bandwidth, cpuset, memory and CPU weight went in as engine options; I/O weights and
	// limits need the data's host device and are written into the container's group now, before
	// any load reaches the server.
	b.device = hostcg.Device(b.dataOnHost)
	how := map[string]string{"cpus_cpuset_memory": "engine HostConfig.Resources (NanoCPUs, CpusetCpus, Memory)"}
	if r := b.req.Resources; r.CPUWeight > 0 {
		how["cpu_weight_engine"] = fmt.Sprintf("engine HostConfig.Resources.CPUShares %d", cgroup.SharesOf(r.CPUWeight))
	}
	rest := b.req.Resources
	if !b.group.TakesShares() && rest.CPUWeight > 0 {
		// On v2 the runtime turns CPUShares into cpu.weight by its own formula, which is not
		// the inverse of SharesOf (runc 1.1: 1 + (shares-2)*9999/262142, so weight 200 → 2048
		// shares → cpu.weight 79). The weight is written exactly here; the engine's value is
		// kept in the facts.
		how["cpu_weight_engine"] += fmt.Sprintf(" (became cpu.weight %s on v2; rewritten)", readFile(b.group.Dir(""), "cpu.weight"))
	} else {
		rest.CPUWeight = 0 // applied exactly by the engine (v1 cpu.shares); read back below
	}
	applied, warns, err := hostcg.Apply(b.group, rest, b.device, how)
	b.applied, b.warns = applied, append(b.warns, warns...)
	if err != nil {
		return err
	}
	return b.endpoint(ins)
}

// hostDataDir is where the data directory is on the host, for disk telemetry: the storage's
// host directory, or inside the container's writable layer (overlay2's upper directory).
func (b *box) hostDataDir(ins container.InspectResponse) string {
	if b.hostDir != "" {
		return filepath.Join(b.hostDir, "db")
	}
	if mp := b.volumeDir; mp != "" {
		if _, err := os.Stat(mp); err == nil {
			return filepath.Join(mp, "db")
		}
	}
	if b.req.Storage == StorageOverlay && ins.GraphDriver.Data["UpperDir"] != "" {
		return filepath.Join(ins.GraphDriver.Data["UpperDir"], b.layout.DataDir)
	}
	return ""
}

func (b *box) endpoint(ins container.InspectResponse) error {
	switch b.req.Network {
	case NetworkHost:
		b.ep = driver.Endpoint{Host: "127.0.0.1", Port: b.layout.Port}
		b.facts["network_path"] = "host network namespace, loopback"
	case NetworkPublished:
		port := nat.Port(strconv.Itoa(b.layout.Port) + "/tcp")
		binds := ins.NetworkSettings.Ports[port]
		if len(binds) == 0 {
			return fmt.Errorf("published port %s has no host binding", port)
		}
		hp, err := strconv.Atoi(binds[0].HostPort)
		if err != nil {
			return fmt.Errorf("published port %s: host port %q: %w", port, binds[0].HostPort, err)
		}
		b.ep = driver.Endpoint{Host: "127.0.0.1", Port: hp}
		b.facts["network_path"] = publishedPath(hp, ctrIP(ins), b.layout.Port)
	case NetworkDirect:
		ip := ctrIP(ins)
		if ip == "" {
			return fmt.Errorf("container %s has no bridge address", b.facts["container"])
		}
		b.ep = driver.Endpoint{Host: ip, Port: b.layout.Port}
		b.facts["network_path"] = "bridge address " + ip + " (no proxy, no NAT)"
	}
	b.facts["endpoint"] = b.ep.String()
	return nil
}

// ctrIP is the container's address on its (first) bridge network.
func ctrIP(ins container.InspectResponse) string {
	if ins.NetworkSettings == nil {
		return ""
	}
	for _, n := range ins.NetworkSettings.Networks {
		if n != nil && n.IPAddress != "" {
			return n.IPAddress
		}
	}
	return ""
}

// publishedPath says how a client on 127.0.0.1 reaches a published port: through the engine's
// userland proxy when one listens on it, otherwise through NAT rules.
func publishedPath(hostPort int, ip string, port int) string {
	to := fmt.Sprintf("127.0.0.1:%d -> %s:%d", hostPort, ip, port)
	if pid := proxyPID(hostPort); pid > 0 {
		return fmt.Sprintf("published port %s through docker-proxy (userland proxy, pid %d)", to, pid)
	}
	return "published port " + to + " through NAT (no userland proxy process found)"
}

// proxyPID finds a docker-proxy process serving hostPort.
func proxyPID(hostPort int) int {
	ents, _ := os.ReadDir("/proc")
	want := strconv.Itoa(hostPort)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(raw), "\x00")
		if len(args) == 0 || filepath.Base(args[0]) != "docker-proxy" {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-host-port" && args[i+1] == want {
				return pid
			}
		}
	}
	return 0
}

func (b *box) waitReady(ctx context.Context) error {
	return platform.WaitReady(ctx, b.req.DBMS, b.ep, b.exited, func() error {
		return fmt.Errorf("exit code %d", b.exitCode)
	})
}
