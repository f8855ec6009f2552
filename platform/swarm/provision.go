package swarm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
	"github.com/boxbench/boxbench/platform/hostcg"
)

// pendingGrace is how long a task may stay pending with the scheduler's reason before the
// provision fails with it.
const pendingGrace = 5 * time.Second

// defaultShm is /dev/shm's size without a memory limit, as on the docker platform.
const defaultShm int64 = 1 << 30

func (b *box) provision(ctx context.Context) error {
	r := b.req
	if err := os.MkdirAll(r.WorkDir, 0o755); err != nil {
		return err
	}
	im, err := b.p.d.Image(ctx, r.DBMS)
	if err != nil {
		return err
	}
	b.img = im
	for k, v := range im.Facts() {
		b.facts[k] = v
	}
	warns, same := docker.VersionCheck(ctx, im, r.Log)
	b.warns = append(b.warns, warns...)
	if same != "" {
		b.facts["version_check"] = same
	}
	if err := b.place(ctx); err != nil {
		return err
	}
	ef, info, err := b.at.d.EngineFacts(ctx)
	if err != nil {
		return err
	}
	for k, v := range ef {
		b.facts[k] = v
	}
	b.facts["runtime"] = info.DefaultRuntime + " (the engine's default: a service spec names no runtime)"
	b.layout = dbms.Layout{DataDir: platform.BoxDataDir, RunDir: platform.BoxRunDir, Listen: "0.0.0.0", Port: r.DBMS.DefaultPort()}
	if r.Node != nil {
		b.facts["node"] = r.Node.Name
	}
	if r.Network == NetworkHost {
		b.layout.Listen = "127.0.0.1"
		if r.Node != nil {
			// A cluster's node listens where its peers were told it does (platform.Node).
			if b.layout.Port = r.Node.Ports[dbms.PortClient]; b.layout.Port == 0 {
				return fmt.Errorf("node %s has no client port", r.Node.Name)
			}
		} else if b.layout.Port, err = platform.FreePort(); err != nil {
			return err
		}
	}
	mounts, err := b.prepareStorage(ctx)
	if err != nil {
		return err
	}
	seed := ""
	if r.Seed != nil {
		seed = r.Seed.Dir
	} else {
		var how string
		// On this host's engine: the data directory is on this host whichever node runs the task.
		seed, how, err = b.p.d.InitDataDir(ctx, r, im, b.layout, func(id string) { b.addHelper(b.p.d, id) },
			func(ctx context.Context, id string) { b.removeHelper(ctx, b.p.d, id) })
		b.facts["restore"] = how
		if err != nil {
			return err
		}
	}
	settings := dbms.Settings{MemoryBytes: r.Resources.MemoryBytes}
	b.facts["config_hash"] = dbms.TemplateHash(r.DBMS, settings)
	method, err := docker.RestoreHost(ctx, b.hostDir, seed, r.DBMS.ConfigFiles(settings), im.UID, im.GID)
	if err != nil {
		return err
	}
	b.facts["restore"] += method + map[bool]string{true: " into the local volume's mountpoint", false: " into a host directory"}[r.Storage == StorageVolume]
	run := filepath.Join(r.WorkDir, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		return err
	}
	if err := os.Chown(run, im.UID, im.GID); err != nil {
		return err
	}
	mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: run, Target: platform.BoxRunDir})
	if err := b.createService(ctx, mounts); err != nil {
		return err
	}
	if err := b.waitTask(ctx); err != nil {
		return err
	}
	if err := b.readBack(ctx); err != nil {
		return err
	}
	if err := platform.WaitReady(ctx, r.DBMS, b.ep, b.exited, func() error { return fmt.Errorf("exit code %d", b.exitCode) }); err != nil {
		return err
	}
	return b.checkPath(ctx)
}

// prepareStorage makes the storage on the host and returns the data mount. Every storage of
// this platform is a host directory, so the seed is restored with the same cp as natively.
func (b *box) prepareStorage(ctx context.Context) ([]mount.Mount, error) {
	r := b.req
	b.facts["storage"] = r.Storage
	switch r.Storage {
	case StorageVolume:
		cctx, cancel := docker.Settled(ctx)
		defer cancel()
		lab := docker.Labels(r, "data")
		lab[docker.LabelPlatform] = Name // in use by a task until its service is gone: swarm's to remove
		// On the task's engine: the service mounts the volume by name there.
		v, err := b.at.engine().VolumeCreate(cctx, volume.CreateOptions{Name: docker.ObjectName(r, "data"),
			Driver: "local", Labels: lab})
		if err != nil {
			return nil, fmt.Errorf("create volume: %w", err)
		}
		b.volume = v.Name
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if fi, err := os.Stat(v.Mountpoint); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("volume %s: its mountpoint %q is not visible on this host: %v", v.Name, v.Mountpoint, err)
		}
		b.hostDir = v.Mountpoint
		b.facts["storage_volume"] = v.Name
		b.facts["storage_volume_driver"] = v.Driver
		b.facts["storage_volume_mountpoint"] = v.Mountpoint
		b.facts["storage_mount"] = "volume " + v.Name + " on " + platform.BoxDataMount + " (created before the service, which mounts it by name)"
		b.dataOnHost = filepath.Join(v.Mountpoint, "db")
		return []mount.Mount{{Type: mount.TypeVolume, Source: v.Name, Target: platform.BoxDataMount}}, nil
	case StorageBind, StorageTmpfs:
		// Not cancellable, as on the docker platform: a cancelled Prepare could not undo its steps.
		st, err := storage.Prepare(context.WithoutCancel(ctx), r.Storage, r.WorkDir, r.StorageOpts.Host(r.Storage))
		if err != nil {
			return nil, err
		}
		b.store = st
		for k, v := range st.Facts {
			b.facts["storage_"+k] = v
		}
		b.hostDir = st.Path
		b.dataOnHost = filepath.Join(st.Path, "db")
		b.facts["storage_mount"] = "bind " + st.Path + " on " + platform.BoxDataMount
		return []mount.Mount{{Type: mount.TypeBind, Source: st.Path, Target: platform.BoxDataMount,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}}}, nil
	}
	return nil, fmt.Errorf("swarm does not support storage %q", r.Storage)
}

// createService creates the box's overlay network (overlay, vip) and its service, holding the
// swarm lock from the swarm's init to the service's creation, so that no release leaves the
// swarm in between. A node already chosen (a swarm of several engines) gets its image before
// the lock is taken: copying an image into another engine takes minutes on a loaded host, and
// every boxbench process's cleanup waits on that lock (an interrupted run's exit waited past
// its limit behind such a copy).
func (b *box) createService(ctx context.Context, mounts []mount.Mount) error {
	r := b.req
	if b.at.ID != "" {
		if err := b.ensureImage(ctx, b.at); err != nil {
			return err
		}
	}
	unlock, err := lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := b.p.ensure(ctx)
	if err != nil {
		return err
	}
	if b.at.ID == "" {
		b.at.ID = st.NodeID // a single-node swarm: this engine's node, whose image is local
		if err := b.ensureImage(ctx, b.at); err != nil {
			return err
		}
	}
	b.facts["swarm_node"] = b.at.ID
	b.facts["swarm_cluster"] = st.ClusterID
	b.facts["swarm_created_by_boxbench"] = strconv.FormatBool(st.Created)
	lim := r.Resources
	shm := defaultShm
	if lim.MemoryBytes > 0 {
		shm = lim.MemoryBytes
	}
	b.facts["shm_bytes"] = strconv.FormatInt(shm, 10)
	mounts = append(mounts, mount.Mount{Type: mount.TypeTmpfs, Target: "/dev/shm",
		TmpfsOptions: &mount.TmpfsOptions{SizeBytes: shm, Mode: 0o1777}})
	argv := r.DBMS.StartCommand(b.layout)
	b.facts["command"] = strings.Join(argv, " ")
	b.facts["user"] = fmt.Sprintf("%s (uid %d, gid %d in the image)", b.img.User, b.img.UID, b.img.GID)
	grace := stopTimeout
	one := uint64(1)
	spec := swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: docker.ObjectName(r, "svc"), Labels: docker.Labels(r, "service")},
		TaskTemplate: swarm.TaskSpec{
			// The image by id: the engine then neither asks a registry for a digest nor tries a pull.
			ContainerSpec: &swarm.ContainerSpec{Image: b.img.ID, Command: argv, User: r.DBMS.User(), Dir: "/",
				Labels: docker.Labels(r, "server"), StopSignal: docker.SignalName(r.DBMS.StopSignal()),
				StopGracePeriod: &grace, Mounts: mounts},
			Resources: &swarm.ResourceRequirements{
				Limits:       &swarm.Limit{NanoCPUs: int64(lim.CPUs * 1e9), MemoryBytes: lim.MemoryBytes},
				Reservations: &swarm.Resources{NanoCPUs: int64(lim.CPUs * 1e9), MemoryBytes: lim.MemoryBytes}},
			// A server that dies is a failed run, not a task for the orchestrator to replace.
			RestartPolicy: &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionNone},
			// Its node (place): the task's group and storage must be on this host.
			Placement: &swarm.Placement{Constraints: []string{"node.id==" + b.at.ID}},
		},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &one}},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}
	switch r.Network {
	case NetworkHost:
		spec.TaskTemplate.Networks = []swarm.NetworkAttachmentConfig{{Target: "host"}}
	case NetworkOverlay, NetworkVIP:
		if err := b.createNetwork(ctx); err != nil {
			return err
		}
		spec.TaskTemplate.Networks = []swarm.NetworkAttachmentConfig{{Target: b.network}}
		if n := r.Node; n != nil {
			// A cluster's node: its name resolves, on the cluster's network, to its task
			// (dnsrr), and is its host name (topology.go).
			spec.TaskTemplate.Networks[0].Aliases = []string{n.Name}
			spec.TaskTemplate.ContainerSpec.Hostname = n.Name
			b.facts["network_alias"] = n.Name
		}
		if r.Network == NetworkVIP {
			spec.EndpointSpec.Mode = swarm.ResolutionModeVIP
		}
	default:
		return fmt.Errorf("swarm does not support network %q", r.Network)
	}
	b.facts["network"] = r.Network
	b.facts["service"] = spec.Name
	b.facts["service_resources"] = fmt.Sprintf("limits = reservations: %g CPUs, %d bytes of memory", lim.CPUs, lim.MemoryBytes)
	cctx, cancel := docker.Settled(ctx)
	defer cancel()
	resp, err := b.p.engine.ServiceCreate(cctx, spec, swarm.ServiceCreateOptions{})
	if err != nil {
		return fmt.Errorf("create service %s: %w", spec.Name, err)
	}
	b.mu.Lock()
	b.service = resp.ID
	b.mu.Unlock()
	for _, w := range resp.Warnings {
		b.warns = append(b.warns, platform.Warning{Code: "service_create", Message: w})
	}
	b.facts["service_id"] = resp.ID
	return ctx.Err()
}

// createNetwork makes the box's overlay network: attachable, so the client's container can
// join it; labelled, so Cleanup finds it.
func (b *box) createNetwork(ctx context.Context) error {
	if n := b.req.Node; n != nil && n.Network != "" {
		// A cluster's node joins the cluster's network (ClusterNetwork), which the cluster removes.
		ins, err := b.p.engine.NetworkInspect(ctx, n.Network, network.InspectOptions{})
		if err != nil {
			return fmt.Errorf("the cluster's network %s: %w", n.Network, err)
		}
		b.mu.Lock()
		b.network, b.netName, b.sharedNet = ins.ID, n.Network, true
		b.mu.Unlock()
		b.facts["network_name"] = n.Network
		return nil
	}
	name := docker.ObjectName(b.req, "net")
	cctx, cancel := docker.Settled(ctx)
	defer cancel()
	n, err := b.p.engine.NetworkCreate(cctx, name, network.CreateOptions{Driver: "overlay", Attachable: true,
		Labels: docker.Labels(b.req, "network")})
	if err != nil {
		return fmt.Errorf("create overlay network %s: %w", name, err)
	}
	b.mu.Lock()
	b.network, b.netName = n.ID, name
	b.mu.Unlock()
	b.facts["network_name"] = name
	return ctx.Err()
}

// waitTask waits for the service's task to run and registers the wait for its exit. A task that
// fails, is rejected or stays pending (no node with the reserved resources) ends the provision
// with the orchestrator's own message.
func (b *box) waitTask(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, platform.ReadyTimeout)
	defer cancel()
	f := filters.NewArgs(filters.Arg("service", b.service))
	var last string
	var stuck time.Time // since when the task is pending with the scheduler's reason
	for {
		ts, err := b.p.engine.TaskList(wctx, swarm.TaskListOptions{Filters: f})
		if err != nil {
			return fmt.Errorf("list the service's tasks: %w", err)
		}
		for _, t := range ts {
			if id := containerOf(t); id != "" {
				b.mu.Lock()
				b.task = id
				b.mu.Unlock()
			}
			s := t.Status
			last = fmt.Sprintf("task %s is %s: %s %s", t.ID, s.State, s.Message, s.Err)
			switch s.State {
			case swarm.TaskStateRunning:
				// The facts say where the task ran from the node chosen for it (place): hold
				// the orchestrator to it, so that ran_on is never a plan the swarm ignored.
				if b.at.ID != "" && t.NodeID != b.at.ID {
					return fmt.Errorf("the service's task %s runs on swarm node %s, not on %s (%s) where it was constrained", t.ID, t.NodeID, b.at.ID, b.at.where())
				}
				if containerOf(t) != "" {
					b.facts["task"] = t.ID
					b.facts["task_container"] = containerOf(t)
					return b.watchExit()
				}
			case swarm.TaskStatePending:
				// On a single node with the task constrained to it, "no suitable node
				// (insufficient resources …)" does not change by waiting.
				if s.Err == "" {
					stuck = time.Time{}
				} else if stuck.IsZero() {
					stuck = time.Now()
				} else if time.Since(stuck) > pendingGrace {
					return fmt.Errorf("the service's %s", strings.TrimSpace(last))
				}
			case swarm.TaskStateFailed, swarm.TaskStateRejected, swarm.TaskStateComplete,
				swarm.TaskStateShutdown, swarm.TaskStateOrphaned, swarm.TaskStateRemove:
				return fmt.Errorf("the service's %s", strings.TrimSpace(last))
			}
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("the service's task did not run (last: %s): %w", last, wctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func containerOf(t swarm.Task) string {
	if t.Status.ContainerStatus == nil {
		return ""
	}
	return t.Status.ContainerStatus.ContainerID
}

// watchExit closes b.exited when the task container stops running; the wait lives until the
// box is torn down.
func (b *box) watchExit() error {
	exited := docker.WatchExit(b.life, b.at.engine(), b.task, container.WaitConditionNotRunning, &b.exitCode)
	b.mu.Lock()
	b.exited = exited
	b.mu.Unlock()
	return nil
}

// readBack finds the task container's group, writes what a service spec cannot say (cpuset,
// weights, I/O caps) into it, reads every control back, and sets the endpoints.
func (b *box) readBack(ctx context.Context) error {
	ins, err := b.at.engine().ContainerInspect(ctx, b.task)
	if err != nil {
		return fmt.Errorf("inspect the task container: %w", err)
	}
	if ins.State == nil || ins.State.Pid == 0 {
		return fmt.Errorf("task container %s is not running (%+v)", b.task[:12], ins.State)
	}
	b.facts["container"] = strings.TrimPrefix(ins.Name, "/")
	b.facts["server_pid"] = strconv.Itoa(ins.State.Pid)
	b.facts["data_dir"] = b.layout.DataDir
	b.facts["host_data_dir"] = b.dataOnHost
	if b.group, err = cgroup.OfProcess(ins.State.Pid); err != nil {
		return err
	}
	b.facts["cgroup"] = b.group.Path()
	lim := b.req.Resources
	how := map[string]string{"cpus_memory": "service TaskTemplate.Resources (Limits and Reservations: NanoCPUs, MemoryBytes)"}
	if lim.Cpuset != "" {
		path := filepath.Join(b.group.Dir("cpuset"), "cpuset.cpus") // v1's cpuset hierarchy, or v2's one group
		if err := os.WriteFile(path, []byte(lim.Cpuset), 0); err != nil {
			return fmt.Errorf("cpuset %s: write %s: %w", lim.Cpuset, path, err)
		}
		how["cpuset"] = "cpuset.cpus written into the task container's group when its task ran (a service spec has no cpuset)"
	}
	device := hostcg.Device(b.dataOnHost)
	applied, warns, err := hostcg.Apply(b.group, lim, device, how)
	b.applied, b.warns = applied, append(b.warns, warns...)
	if err != nil {
		return err
	}
	return b.endpoints(ctx, ins)
}

// endpoints: host mode is loopback; on the overlay the client's container reaches the task's
// overlay address (overlay) or the service's virtual IP (vip), while the host (readiness, the
// runner's liveness check) reaches the task through its address on docker_gwbridge, the bridge
// the engine gives every task on an overlay for outside connectivity (inter-container traffic
// off, so only the host reaches the server there).
func (b *box) endpoints(ctx context.Context, ins container.InspectResponse) error {
	port := b.layout.Port
	switch b.req.Network {
	case NetworkHost:
		b.ep = driver.Endpoint{Host: "127.0.0.1", Port: port}
		b.facts["network_path"] = "host network namespace, loopback (service on the engine's host network)"
		b.facts["endpoint"] = b.ep.String()
		return nil
	}
	var taskIP string
	if n := ins.NetworkSettings; n != nil && n.Networks[b.netName] != nil {
		taskIP = n.Networks[b.netName].IPAddress
	}
	if taskIP == "" {
		return fmt.Errorf("task container %s has no address on %s", b.task[:12], b.netName)
	}
	gw, err := b.at.engine().NetworkInspect(ctx, gwBridge, network.InspectOptions{})
	if err != nil {
		return fmt.Errorf("inspect %s: %w", gwBridge, err)
	}
	hostIP := ""
	if e, ok := gw.Containers[b.task]; ok {
		hostIP, _, _ = strings.Cut(e.IPv4Address, "/")
	}
	if hostIP == "" {
		return fmt.Errorf("task container %s has no address on %s", b.task[:12], gwBridge)
	}
	b.taskIP, b.facts["task_ip"] = taskIP, taskIP
	b.ep = driver.Endpoint{Host: hostIP, Port: port}
	b.siteEP = driver.Endpoint{Host: taskIP, Port: port}
	b.facts["network_path"] = "a container on overlay network " + b.netName + " to the task's overlay address " + b.siteEP.String() + " (one node: through the overlay's bridge in its own namespace; VXLAN carries only traffic between nodes)"
	if b.p.multi {
		b.facts["network_path"] = "a container on overlay network " + b.netName + " on " + b.client.Hostname + " to the task's overlay address " + b.siteEP.String() + " on " + b.at.Hostname + map[bool]string{true: " (the same node: through the overlay's bridge)", false: " (VXLAN between the two engines' network namespaces)"}[b.at == b.client]
	}
	if b.req.Network == NetworkVIP {
		svc, _, err := b.p.engine.ServiceInspectWithRaw(ctx, b.service, swarm.ServiceInspectOptions{})
		if err != nil {
			return fmt.Errorf("inspect service: %w", err)
		}
		for _, v := range svc.Endpoint.VirtualIPs {
			if v.NetworkID == b.network {
				ip, _, _ := strings.Cut(v.Addr, "/")
				b.siteEP = driver.Endpoint{Host: ip, Port: port}
			}
		}
		if b.siteEP.Host == taskIP {
			return fmt.Errorf("service %s has no virtual IP on %s", b.facts["service"], b.netName)
		}
		b.facts["network_path"] = "a container on overlay network " + b.netName + " to the service's virtual IP " + b.siteEP.String() + " (IPVS), task at " + taskIP
	}
	b.facts["endpoint"] = b.siteEP.String()
	b.facts["endpoint_from_host"] = b.ep.String() + " (" + gwBridge + ", for readiness and liveness checks)"
	return nil
}
