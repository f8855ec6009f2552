package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostcg"
)

func signalName(d dbms.DBMS) string { return unix.SignalName(d.StopSignal()) }

// started reads back what the cluster and (on a local node) the kernel hold once the server
// runs: its runtime, QoS class, addresses, cgroup and limits; and sets the endpoint.
func (b *box) started(ctx context.Context) error {
	pod, err := b.cl.cs.CoreV1().Pods(b.ns).Get(ctx, b.name, getOpts)
	if err != nil {
		return fmt.Errorf("pod %s: %w", b.name, err)
	}
	b.podIP = pod.Status.PodIP
	b.facts["qos_class"] = string(pod.Status.QOSClass)
	b.facts["runtime"] = "default"
	if pod.Spec.RuntimeClassName != nil {
		b.facts["runtime"] = "RuntimeClass " + *pod.Spec.RuntimeClassName
	}
	b.facts["data_dir"] = b.layout.DataDir
	var id string
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == ctrServer {
			id = runtimeID(s)
			b.facts["container_id"] = s.ContainerID
			b.facts["image_id_node"] = s.ImageID
		}
	}
	if b.local && id != "" {
		if err := b.applyLocal(id); err != nil {
			return err
		}
	} else {
		b.applyRemote(pod)
	}
	if b.group == nil || b.cfg.Telemetry == TelemetrySummary {
		b.probeSummary(ctx)
	}
	return b.endpoint(ctx)
}

// probeSummary reads the kubelet's summary once, so that a cluster that does not let boxbench
// read it (RBAC: get on nodes/proxy) is said before the run, not found in its telemetry.
func (b *box) probeSummary(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, _, err := b.summaryStats().Read(ctx); err != nil {
		b.statsErr = err
		b.warns = append(b.warns, platform.Warning{Code: "server_telemetry_missing",
			Message: "the server's CPU and memory are not observed: " + err.Error() + " (boxbench needs get on nodes/proxy; docs/kubernetes.md)"})
	}
	b.facts["server_telemetry"] = "kubelet summary API of node " + b.node.Name
}

// applyLocal finds the server container's group on this host, writes what the kubelet cannot
// set (cpuset, weights, I/O limits) and reads every control back from the kernel.
func (b *box) applyLocal(id string) error {
	ref, pid, err := containerGroup(id)
	if err != nil {
		return err
	}
	b.group = &ref
	b.facts["cgroup"] = ref.Path()
	b.facts["server_pid"] = strconv.Itoa(pid)
	lim := b.req.Resources
	how := map[string]string{"cpus_memory": "pod spec requests = limits (the kubelet writes the container's cgroup)"}
	if lim.Cpuset != "" {
		// The kubelet's CPU manager (policy none) leaves a container's cpuset alone.
		if err := os.WriteFile(filepath.Join(ref.Dir("cpuset"), cpusetFile(ref)), []byte(lim.Cpuset), 0o644); err != nil {
			b.warns = append(b.warns, platform.Warning{Code: "cpuset_not_enforced", Message: "writing the container's cpuset failed: " + err.Error()})
		} else {
			how["cpuset"] = "written into the container's cgroup (" + cpusetFile(ref) + ")"
		}
	}
	var dataOnHost string
	if b.hostDir != "" {
		dataOnHost = filepath.Join(b.hostDir, "db")
	}
	applied, warns, err := hostcg.Apply(ref, lim, hostcg.Device(dataOnHost), how)
	b.applied, b.warns = applied, append(b.warns, warns...)
	return err
}

// cpusetFile is the file of a group's cpus, the same name on v1 and v2.
func cpusetFile(cgroup.Ref) string { return "cpuset.cpus" }

// applyRemote: a node that is not this host shows its limits only through the pod's spec.
func (b *box) applyRemote(pod *corev1.Pod) {
	a := resource.Applied{From: "the pod's spec (node " + b.node.Name + " is not this host: no cgroup to read)", How: map[string]string{
		"cpus_memory": "pod spec requests = limits"}}
	for _, c := range pod.Spec.Containers {
		if c.Name != ctrServer {
			continue
		}
		if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
			a.Limits.CPUs = float64(q.MilliValue()) / 1000
		}
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			a.Limits.MemoryBytes = q.Value()
		}
	}
	b.applied = a
	l := b.req.Resources
	if l.Cpuset != "" || l.CPUWeight > 0 || l.IOWeight > 0 || l.HasIOMax() {
		b.warns = append(b.warns, platform.Warning{Code: "limits_not_enforced",
			Message: "cpuset, weights and I/O limits are written into the container's cgroup only when the node is this host; node " + b.node.Name + " is not"})
	}
}

// endpoint is where a client on this host reaches the server.
func (b *box) endpoint(ctx context.Context) error {
	switch b.req.Network {
	case NetworkHost:
		host := "127.0.0.1"
		if !b.hostNetns {
			host = nodeAddress(b.node)
		}
		b.ep = driver.Endpoint{Host: host, Port: b.layout.Port}
		b.facts["network_path"] = "hostNetwork: the node's network namespace (" + host + ")"
	case NetworkPod:
		if b.podIP == "" {
			return fmt.Errorf("pod %s has no IP", b.name)
		}
		b.ep = driver.Endpoint{Host: b.podIP, Port: b.layout.Port}
		b.facts["network_path"] = "pod IP " + b.podIP + " over the CNI (no service, no NAT)"
	case NetworkService, NetworkNodePort:
		s, err := b.cl.cs.CoreV1().Services(b.ns).Get(ctx, b.name, getOpts)
		if err != nil {
			return fmt.Errorf("service %s: %w", b.name, err)
		}
		if b.req.Network == NetworkService {
			b.ep = driver.Endpoint{Host: s.Spec.ClusterIP, Port: b.layout.Port}
			b.facts["network_path"] = fmt.Sprintf("ClusterIP %s:%d through kube-proxy to pod %s", s.Spec.ClusterIP, b.layout.Port, b.podIP)
		} else {
			if len(s.Spec.Ports) == 0 || s.Spec.Ports[0].NodePort == 0 {
				return fmt.Errorf("service %s has no node port", b.name)
			}
			addr := nodeAddress(b.node)
			b.ep = driver.Endpoint{Host: addr, Port: int(s.Spec.Ports[0].NodePort)}
			b.facts["network_path"] = fmt.Sprintf("NodePort %s:%d through kube-proxy to pod %s", addr, s.Spec.Ports[0].NodePort, b.podIP)
		}
	}
	b.facts["endpoint"] = b.ep.String()
	return nil
}

// Observe: the server container's group and, for hostpath/localpv, the host directory when the
// node is this host; otherwise (or with kubernetes.telemetry: summary) the kubelet's summary
// API, and what it lacks is recorded as missing.
func (b *box) Observe() platform.Observation {
	var o platform.Observation
	if b.group != nil && b.cfg.Telemetry != TelemetrySummary {
		o.Cgroup = b.group
	} else if b.statsErr != nil {
		o.Missing = []string{"server CPU, memory, I/O and pressure: the kubelet's summary API could not be read: " + b.statsErr.Error()}
	} else {
		o.Stats = b.summaryStats()
		o.Missing = []string{"server CPU throttling, block I/O and pressure: the " + o.Stats.Via + " has CPU and memory only, refreshed every 10-15 s"}
	}
	switch {
	case b.hostDir != "" && b.local:
		o.DataDir = filepath.Join(b.hostDir, "db")
	case !b.local:
		o.Missing = append(o.Missing, "data device I/O: the data is on node "+nodeName(b.node)+", not this host")
	default:
		o.Missing = append(o.Missing, "data device I/O: storage "+b.req.Storage+" is not a host directory boxbench made")
	}
	o.Parts = func(context.Context) ([]platform.Part, error) {
		// The pod's sandbox, the node's kubelet, kube-proxy and CNI agents serve every pod of
		// the node: where the time goes counts them with the host's other processes.
		return nil, errors.New("the node's kubelet, kube-proxy and CNI agents are not told apart from the host's other processes")
	}
	return o
}

func nodeName(n *corev1.Node) string {
	if n == nil {
		return "?"
	}
	return n.Name
}
