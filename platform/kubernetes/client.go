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

	"github.com/boxbench/boxbench/command"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/platform"
)

// podClient is a box whose client runs in a pod (client: {platform: kubernetes}): the only
// boxes that implement platform.ClientSite, since the runner runs the client at the site of
// every box that does.
type podClient struct{ *box }

var _ platform.ClientSite = podClient{}

const (
	ctrAgent       = "agent"
	agentBinary    = "/boxbench/bin/boxbench"
	agentStartWait = 2 * time.Minute
)

// clientNode is the node a client pod goes to: the configured one, else the server's.
func (b *box) clientNode() string {
	if b.cfg.ClientNode != "" {
		return b.cfg.ClientNode
	}
	return b.node.Name
}

// ClientPlace says where a client pod runs and the server's endpoint as seen from a pod.
func (b podClient) ClientPlace() (string, driver.Endpoint) {
	where := fmt.Sprintf("pod in namespace %s on node %s", b.ns, b.clientNode())
	switch b.req.Network {
	case NetworkHost:
		return where, driver.Endpoint{Host: nodeAddress(b.node), Port: b.layout.Port}
	case NetworkPod:
		return where, driver.Endpoint{Host: b.podIP, Port: b.layout.Port}
	}
	return where, b.ep // the service's ClusterIP, or the node port on the node's address
}

// RunAgent runs `boxbench agent` in a pod on the client node, with stdin as its standard input
// and its standard output copied to stdout. The pod runs the server's image (Debian, glibc)
// with boxbench's binary mounted read-only from this host (hostPath), so the node must be this
// host. The pod is deleted, and its deletion waited for, on every path.
func (b podClient) RunAgent(ctx context.Context, stdin io.Reader, stdout io.Writer) (err error) {
	n, err := b.cl.cs.CoreV1().Nodes().Get(ctx, b.clientNode(), getOpts)
	if err != nil {
		return fmt.Errorf("client node %s: %w", b.clientNode(), err)
	}
	if !isLocal(n) {
		return fmt.Errorf("client node %s is not this host: a client pod there needs an image holding boxbench's binary, which this build does not make", n.Name)
	}
	bin := b.cfg.AgentBinary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("boxbench's binary: %w", err)
		}
	}
	name := b.name + "-client"
	if len(name) > 63 {
		name = name[:63]
	}
	file := corev1.HostPathFile
	no := false
	pod := &corev1.Pod{ObjectMeta: meta(b.req, name, "client"), Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, EnableServiceLinks: &no, AutomountServiceAccountToken: &no,
		Affinity: onNode(n.Name),
		Volumes:  []corev1.Volume{{Name: "bin", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: bin, Type: &file}}}},
		Containers: []corev1.Container{{Name: ctrAgent, Image: b.img.Ref, ImagePullPolicy: b.pull,
			Command:      []string{"sleep", "infinity"},
			VolumeMounts: []corev1.VolumeMount{{Name: "bin", MountPath: agentBinary, ReadOnly: true}}}},
	}}
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
	err = b.stream(ctx, name, ctrAgent, []string{agentBinary, "agent"}, stdin, stdout, &stderr)
	if err != nil {
		return fmt.Errorf("boxbench agent in pod %s/%s: %w: %s", b.ns, name, err, command.Tail(stderr.Bytes(), 2048))
	}
	return nil
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
