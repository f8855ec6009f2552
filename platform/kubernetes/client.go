package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/platform"
)

// podClient is the client site of a box whose client runs in a pod (client: {platform:
// kubernetes}): only such boxes have one, since the runner runs the client at the site of
// every box that has a site.
type podClient struct{ *box }

// Traits: what the box recorded of its cluster, and with client.platform kubernetes, the
// box's client runs in a pod (podClient).
func (b *box) Traits() platform.Traits {
	t := platform.Traits{Orchestrator: b.orch}
	if b.cfg.ClientInCluster {
		t.Site = podClient{b}
	}
	return t
}

// ClientCPUs: a pod's cpus are the node's business, not known cpus of this host.
func (podClient) ClientCPUs() string { return "" }

var _ platform.ClientSite = podClient{}

const (
	ctrAgent       = "agent"
	agentBinary    = "/boxbench/bin/boxbench" // where the host's binary is mounted without an agent image
	agentStartWait = 2 * time.Minute
	agentUID       = 65534 // nobody, the agent image's user
)

// clientNode is the node a client pod goes to: the configured one, else the server's.
func (b *box) clientNode() string {
	if b.clientAt != "" {
		return b.clientAt // a cluster's member: the node ClusterNetwork left for the client
	}
	if b.cfg.ClientNode != "" {
		return b.cfg.ClientNode
	}
	return b.node.Name
}

// ClientPlace says where a client pod runs and the server's endpoint as seen from a pod.
func (b podClient) ClientPlace() (string, driver.Endpoint) {
	where := fmt.Sprintf("pod in namespace %s on node %s", b.ns, b.clientNode())
	if b.cfg.AgentImage != "" {
		where += " running image " + b.cfg.AgentImage
	}
	switch b.req.Network {
	case NetworkHost:
		return where, driver.Endpoint{Host: nodeAddress(b.node), Port: b.layout.Port}
	case NetworkPod:
		return where, driver.Endpoint{Host: b.podIP, Port: b.layout.Port}
	}
	return where, b.ep // the service's ClusterIP, or the node port on the node's address
}

// RunAgent runs `boxbench agent` in a pod on the client node, with stdin as its standard input
// and its standard output copied to stdout. The pod's main process is `boxbench agent --idle`;
// the job's agent is started in it. The pod is deleted, and its deletion waited for, on every
// path.
func (b podClient) RunAgent(ctx context.Context, stdin io.Reader, stdout io.Writer) (err error) {
	n, err := b.cl.cs.CoreV1().Nodes().Get(ctx, b.clientNode(), getOpts)
	if err != nil {
		return fmt.Errorf("client node %s: %w", b.clientNode(), err)
	}
	name := b.name + "-client"
	if len(name) > 63 {
		name = name[:63]
	}
	spec, bin, err := b.agentSpec(ctx, n)
	if err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: meta(b.req, name, "client"), Spec: spec}
	pod.Labels[LabelBox] = b.name + "-client"
	cctx, cancel := settled(ctx)
	_, err = b.cl.cs.CoreV1().Pods(b.ns).Create(cctx, pod, metav1.CreateOptions{})
	cancel()
	if err != nil {
		return fmt.Errorf("create client pod %s: %w", name, err)
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if derr := b.cl.deleteObjects(tctx, b.ns, false, name, "", "", ""); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	if err := b.waitPodContainer(ctx, name, ctrAgent); err != nil {
		return err
	}
	var stderr bytes.Buffer
	err = b.stream(ctx, name, ctrAgent, []string{bin, "agent"}, stdin, stdout, &stderr)
	if err != nil {
		return fmt.Errorf("boxbench agent in pod %s/%s: %w: %s", b.ns, name, err, command.Tail(stderr.Bytes(), 2048))
	}
	return nil
}

// agentSpec is the client pod on node n and the path of boxbench's binary in it: with
// kubernetes.agentImage, that image (on any node; loaded from this host's engine into a local
// node that lacks it), as nobody with no privileges; without, the server's image with this
// process's binary mounted read-only from the host, which only a node that is this host has.
func (b podClient) agentSpec(ctx context.Context, n *corev1.Node) (corev1.PodSpec, string, error) {
	no := false
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, EnableServiceLinks: &no,
		AutomountServiceAccountToken: &no, Affinity: onNode(n.Name)}
	if ref := b.cfg.AgentImage; ref != "" {
		pull, err := b.agentImage(ctx, n, ref)
		if err != nil {
			return spec, "", err
		}
		uid, yes := int64(agentUID), true
		spec.Containers = []corev1.Container{{Name: ctrAgent, Image: ref, ImagePullPolicy: pull,
			Command: []string{image.AgentBinaryPath, "agent", "--idle"},
			SecurityContext: &corev1.SecurityContext{RunAsUser: &uid, RunAsGroup: &uid, RunAsNonRoot: &yes,
				ReadOnlyRootFilesystem: &yes, AllowPrivilegeEscalation: &no,
				Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}}}
		return spec, image.AgentBinaryPath, nil
	}
	if !isLocal(n) {
		return spec, "", fmt.Errorf("client node %s is not this host: a client pod there runs an image holding boxbench's binary; build one with `boxbench images agent`, get it to the node and name it in kubernetes.agentImage", n.Name)
	}
	if b.pull == corev1.PullNever && n.Name != b.node.Name {
		// The server's image, which boxbench loaded into the server's node only.
		if _, err := b.p.loadImage(ctx, n.Name, b.img); err != nil {
			return spec, "", fmt.Errorf("client node %s: %w", n.Name, err)
		}
	}
	bin := b.cfg.AgentBinary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return spec, "", fmt.Errorf("boxbench's binary: %w", err)
		}
	}
	file := corev1.HostPathFile
	spec.Volumes = []corev1.Volume{{Name: "bin", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: bin, Type: &file}}}}
	spec.Containers = []corev1.Container{{Name: ctrAgent, Image: b.img.Ref, ImagePullPolicy: b.pull,
		Command:      []string{agentBinary, "agent", "--idle"},
		VolumeMounts: []corev1.VolumeMount{{Name: "bin", MountPath: agentBinary, ReadOnly: true}}}}
	return spec, agentBinary, nil
}

// agentImage makes the agent image ref available to node n: a local node gets it from this
// host's engine when the engine has it; otherwise the node pulls it.
func (b podClient) agentImage(ctx context.Context, n *corev1.Node, ref string) (corev1.PullPolicy, error) {
	if !isLocal(n) || b.p.engine == nil {
		return corev1.PullIfNotPresent, nil
	}
	ins, err := b.p.engine.ImageInspect(ctx, ref)
	if err != nil {
		return corev1.PullIfNotPresent, nil // not built here: the node pulls it
	}
	if _, err := b.p.loadImage(ctx, n.Name, image.Image{Ref: ref, ID: ins.ID}); err != nil {
		return "", fmt.Errorf("agent image %s: %w", ref, err)
	}
	return corev1.PullNever, nil
}

// waitPodContainer waits until container c of pod name runs.
func (b *box) waitPodContainer(ctx context.Context, name, c string) error {
	ctx, cancel := context.WithTimeout(ctx, agentStartWait)
	defer cancel()
	var last string
	for {
		p, err := b.cl.cs.CoreV1().Pods(b.ns).Get(ctx, name, getOpts)
		if err == nil {
			for _, s := range p.Status.ContainerStatuses {
				if s.Name == c && s.State.Running != nil {
					return nil
				}
				if s.Name == c && s.State.Waiting != nil {
					last = s.State.Waiting.Reason + " " + s.State.Waiting.Message
				}
				if s.Name == c && s.State.Terminated != nil {
					return fmt.Errorf("client pod %s: container ended: %s (exit code %s)", name, s.State.Terminated.Reason, strconv.Itoa(int(s.State.Terminated.ExitCode)))
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("client pod %s did not start (last: %s): %w", name, last, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
