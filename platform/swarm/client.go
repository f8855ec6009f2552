package swarm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
)

// siteBox is the client site of a box on an overlay network (overlay, vip): the measured
// client runs in a container attached to the box's overlay network, as another service's task
// would, and reaches the server through the overlay network (overlay) or through the
// service's virtual IP (vip). The host reaches the box only for readiness and liveness checks
// (Endpoint).
type siteBox struct{ *box }

// Traits: a box on an overlay network has its client site there (siteBox).
func (b *box) Traits() platform.Traits {
	if b.req.Network != NetworkHost {
		return platform.Traits{Site: siteBox{b}}
	}
	return platform.Traits{}
}

var _ platform.ClientSite = siteBox{}

// agentPath is where the client container sees boxbench's own binary (bind-mounted read-only:
// the images are Debian bookworm with glibc, like the host the binary was built for).
const agentPath = "/boxbench-agent/boxbench"

// ClientPlace says where the client runs and the server's endpoint from there.
func (s siteBox) ClientPlace() (string, driver.Endpoint) {
	what := "the task's overlay address"
	if s.req.Network == NetworkVIP {
		what = "the service's virtual IP"
	}
	on := ""
	if s.p.multi {
		on = " on " + s.client.where()
	}
	return fmt.Sprintf("container on overlay network %s%s (image %s, cpus %s) to %s", s.netName, on, s.img.Ref, ownCPUs(), what), s.siteEP
}

// RunAgent runs `boxbench agent` in a container on the box's overlay network, with stdin as its
// standard input and its standard output copied to stdout. The container gets the cpus this
// process runs on (the client's placement) and is removed on every path; ctx kills it.
func (s siteBox) RunAgent(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find boxbench's own binary: %w", err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return fmt.Errorf("find boxbench's own binary: %w", err)
	}
	mounts := []mount.Mount{{Type: mount.TypeBind, Source: self, Target: agentPath, ReadOnly: true}}
	var stderr bytes.Buffer
	err = s.runSite(ctx, "client", []string{agentPath, "agent"}, mounts, stdin, stdout, &stderr)
	if err != nil {
		return fmt.Errorf("boxbench agent in a container on %s: %w\nagent stderr (tail):\n%s", s.netName, err,
			command.Tail(stderr.Bytes(), command.TailBytes))
	}
	return nil
}

// checkPath makes sure the client's path works before anything is measured: from a container on
// the overlay, the task's overlay address answers a TCP connect, and for vip the virtual IP
// does too. Without IPVS the engine accepts a VIP service whose virtual IP never answers; this
// is where that shows, with the connect's own error.
func (b *box) checkPath(ctx context.Context) error {
	if b.req.Network == NetworkHost {
		return nil
	}
	task := driver.Endpoint{Host: b.taskIP, Port: b.layout.Port}
	if err := b.connect(ctx, task); err != nil {
		return fmt.Errorf("the task's overlay address %s does not answer from a container on %s: %w", task, b.netName, err)
	}
	if b.req.Network != NetworkVIP {
		return nil
	}
	if err := b.connect(ctx, b.siteEP); err != nil {
		why := ""
		if kerr := kernelHas("CONFIG_IP_VS", "the engine's virtual IPs are IPVS load balancers"); kerr != nil {
			why = "; " + kerr.Error()
		}
		return fmt.Errorf("the service's virtual IP %s does not answer from a container on %s, while the task's own address %s does: %w%s",
			b.siteEP, b.netName, task, err, why)
	}
	return nil
}

// connectTimeout bounds one TCP connect from the overlay.
const connectTimeout = 5

// connect opens a TCP connection to ep from a short-lived container on the overlay (bash's
// /dev/tcp; the address and port are the engine's, passed as arguments, never through a shell
// string).
func (b *box) connect(ctx context.Context, ep driver.Endpoint) error {
	var out bytes.Buffer
	err := b.runSite(ctx, "check", []string{"timeout", strconv.Itoa(connectTimeout), "bash", "-c",
		`exec 3<>"/dev/tcp/$0/$1"`, ep.Host, strconv.Itoa(ep.Port)}, nil, nil, &out, &out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errExit124):
		return fmt.Errorf("no connection within %d s (timed out)", connectTimeout)
	case len(bytes.TrimSpace(out.Bytes())) > 0:
		lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
		return fmt.Errorf("%w: %s", err, lines[len(lines)-1])
	}
	return err
}

var errExit124 = errors.New("exit status 124")

// ownCPUs is this process's cpu list: the client's placement (placement.client pins it).
func ownCPUs() string { return placement.FormatList(placement.OwnCPUs()) }

// ClientCPUs is the cpu list the client container runs on (platform.ClientSite): this
// process's, so placement.client holds for the client on the overlay too.
func (s siteBox) ClientCPUs() string { return ownCPUs() }

// siteStarts bounds the attempts to start a site container. A worker's engine can answer the
// start with "network … not found" for an attachable overlay it has not attached anything to
// yet, although the manager knows the network and the create found it by name (2026-11-27: the
// check container of an etcd member's task on a swarm of four engines, once in that experiment's
// four Swarm runs; the run failed with it). Nothing has run then, so starting a new container again is safe.
const siteStarts = 5

// errNetworkNotYet marks a site container's start refused for a network its engine does not
// know yet.
var errNetworkNotYet = errors.New("the client's engine does not know the overlay network yet")

// runSite runs argv in a fresh container of the box's image on its overlay network, on the
// client's node, as nobody, pinned to the cpus of this process, and removes it on every path.
// A start refused for a network the engine does not know yet is tried again with a new
// container, up to siteStarts times, 1, 2, 3 … s apart.
func (b *box) runSite(ctx context.Context, role string, argv []string, mounts []mount.Mount, stdin io.Reader, stdout, stderr io.Writer) error {
	for attempt := 1; ; attempt++ {
		err := b.runSiteOnce(ctx, role, argv, mounts, stdin, stdout, stderr)
		if !errors.Is(err, errNetworkNotYet) || attempt == siteStarts {
			return err
		}
		b.p.log.Info("a site container's engine did not know its overlay network yet: starting a new one",
			"role", role, "network", b.netName, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
}

// runSiteOnce is one attempt of runSite: nothing is read from stdin before the start succeeded.
func (b *box) runSiteOnce(ctx context.Context, role string, argv []string, mounts []mount.Mount, stdin io.Reader, stdout, stderr io.Writer) error {
	cpus := ownCPUs()
	d := b.client.d
	if err := b.ensureImage(ctx, b.client); err != nil {
		return err
	}
	cfg := &container.Config{Image: b.img.ID, Cmd: argv, User: "65534:65534", WorkingDir: "/",
		Labels: docker.Labels(b.req, role), AttachStdout: true, AttachStderr: true,
		AttachStdin: stdin != nil, OpenStdin: stdin != nil, StdinOnce: stdin != nil}
	// By name: a worker's engine that runs no task of the network yet attaches a container to
	// an attachable overlay by its name, not its id ("network … not found" at start).
	hc := &container.HostConfig{NetworkMode: container.NetworkMode(b.netName), Mounts: mounts,
		Resources: container.Resources{CpusetCpus: cpus}}
	cctx, cancel := docker.Settled(ctx)
	defer cancel()
	c, err := d.Engine().ContainerCreate(cctx, cfg, hc, nil, nil, docker.ObjectName(b.req, role))
	if err != nil {
		return fmt.Errorf("create %s container: %w", role, err)
	}
	b.addHelper(d, c.ID)
	defer b.removeHelper(context.WithoutCancel(ctx), d, c.ID)
	hj, err := d.Engine().ContainerAttach(ctx, c.ID, container.AttachOptions{Stream: true,
		Stdin: stdin != nil, Stdout: true, Stderr: true})
	if err != nil {
		return fmt.Errorf("attach %s container: %w", role, err)
	}
	defer hj.Close()
	stop := context.AfterFunc(ctx, hj.Close)
	defer stop()
	waitC, errC := d.Engine().ContainerWait(context.WithoutCancel(ctx), c.ID, container.WaitConditionNextExit)
	if err := d.Engine().ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		// The engine's answer: "network <id> not found".
		if msg := err.Error(); strings.Contains(msg, "network ") && strings.Contains(msg, " not found") {
			return fmt.Errorf("start %s container: %w (%w)", role, err, errNetworkNotYet)
		}
		return fmt.Errorf("start %s container: %w", role, err)
	}
	if stdin != nil {
		go func() {
			_, _ = io.Copy(hj.Conn, stdin)
			_ = hj.CloseWrite()
		}()
	}
	_, cerr := stdcopy.StdCopy(stdout, stderr, hj.Reader)
	if ctx.Err() != nil {
		return ctx.Err() // the deferred removal kills it
	}
	select {
	case w := <-waitC:
		if w.StatusCode == 124 {
			return errExit124
		}
		if w.StatusCode != 0 {
			return fmt.Errorf("exit status %d", w.StatusCode)
		}
		return cerr
	case err := <-errC:
		return fmt.Errorf("wait for the %s container: %w", role, err)
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(removeTimeout):
		return fmt.Errorf("the %s container's output ended but no exit was reported within %s", role, removeTimeout)
	}
}
