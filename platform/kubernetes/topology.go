package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/platform"
)

// A cluster on kubernetes (platform.Clusterer, docs/topology.md) is one bare pod per node, each
// an ordinary box of this platform (its own pod, limits and storage, made and deleted around
// the run, found by label after a crash). Two networks carry one:
//
//   - host: every node's pod on hostNetwork, its server on the loopback address at the ports
//     package cluster reserved on this host, so the node must be this host; the peers name each
//     other 127.0.0.1:<port>, exactly as native and docker host-mode nodes do.
//   - pod: every node's pod on a Kubernetes node of its own (explicit node names, decided
//     before any pod runs), in one namespace with a headless Service over the cluster's pods
//     (publishNotReadyAddresses: a member must resolve its peers before they are ready). Each
//     pod takes `hostname: nN` and `subdomain: <service>` and searches
//     `<service>.<namespace>.svc.<domain>`, so the name nN that the database's configuration
//     gives its peers resolves through cluster DNS to that pod's own IP, a StatefulSet's
//     identity without a controller (which would restart a server boxbench stopped). It needs
//     cluster DNS: ClusterNetwork refuses a cluster without the kube-dns Service.
//
// Service and NodePort are refused: they put kube-proxy's load balancing between peers that
// must each reach one member.

// LabelCluster selects the pods of one cluster on the pod network (its headless Service's
// selector).
const LabelCluster = "boxbench.cluster"

// ClusterRefuses: the host and pod networks carry a cluster; a Service's virtual IP does not.
func (*Platform) ClusterRefuses() map[string]string {
	lb := "puts kube-proxy's load balancing between peers that must each reach one member " +
		"(use pod: peers by name through a headless Service and cluster DNS, or host)"
	return map[string]string{
		NetworkService:  "a ClusterIP " + lb,
		NetworkNodePort: "a NodePort " + lb,
	}
}

// podCluster is what the nodes of one cluster on the pod network share, decided before any of
// its pods is made: the namespace, the headless Service, and which Kubernetes node each member
// and the client go to.
type podCluster struct {
	ns, svc string
	domain  string   // the cluster's DNS domain
	nodes   []string // the schedulable nodes, sorted; member i goes to nodes[i]
}

// memberNode is member i's node of a cluster of count members, or why there is none.
func (c *podCluster) memberNode(i, count int) (string, error) {
	if count > len(c.nodes) {
		return "", fmt.Errorf("a cluster of %d nodes on the pod network puts each on a Kubernetes node of its own, and the cluster has %d schedulable (%s): use fewer nodes or network host", count, len(c.nodes), strings.Join(c.nodes, ", "))
	}
	return c.nodes[i], nil
}

// clientNode is where the client of a cluster of count members runs: the configured node, else
// the first node that holds no member, else (none to spare) the last member's, with a warning.
func (c *podCluster) clientNode(configured string, count int) (string, *platform.Warning) {
	if configured != "" {
		for i := 0; i < min(count, len(c.nodes)); i++ {
			if c.nodes[i] == configured {
				return configured, &platform.Warning{Code: "client_shares_node", Message: fmt.Sprintf(
					"the client runs on node %s (client.node), which holds member n%d: they share that node's CPUs and network", configured, i+1)}
			}
		}
		return configured, nil
	}
	if count < len(c.nodes) {
		return c.nodes[count], nil
	}
	last := c.nodes[len(c.nodes)-1]
	return last, &platform.Warning{Code: "client_shares_node", Message: fmt.Sprintf(
		"the cluster has no node to spare for the client (%d nodes, %d members): it runs on node %s beside member n%d", len(c.nodes), count, last, len(c.nodes))}
}

// ClusterNetwork: nodes on hostNetwork share the node's network, nothing to make. On the pod
// network it checks for cluster DNS, makes the cluster's namespace (unless kubernetes.namespace
// names one) and its headless Service, and lists the nodes the members go to; release deletes
// the Service and the namespace it made. Other networks are refused with ClusterRefuses' reason.
func (p *Platform) ClusterNetwork(ctx context.Context, r platform.Request) (string, func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	switch r.Network {
	case NetworkHost:
		return "", none, nil
	case NetworkPod:
	default:
		return "", none, platform.RefusedNetwork("kubernetes", r.Network, p.ClusterRefuses(), NetworkHost, NetworkPod)
	}
	cl, err := p.reach(ctx, r.Cluster)
	if err != nil {
		return "", none, err
	}
	if err := clusterDNS(ctx, cl); err != nil {
		return "", none, err
	}
	nodes, err := schedulable(ctx, cl, p.config().ClientNode)
	if err != nil {
		return "", none, err
	}
	name, err := objectName(r)
	if err != nil {
		return "", none, err
	}
	pc := &podCluster{svc: name, domain: "cluster.local", nodes: nodes}
	ownNS := false
	if pc.ns = p.config().Namespace; pc.ns == "" {
		b := &box{p: p, req: r, cl: cl, name: name, cfg: p.config(), facts: map[string]string{}}
		if err := b.namespace(ctx); err != nil {
			return "", none, err
		}
		pc.ns, ownNS = b.ns, true
	}
	release := func(ctx context.Context) error {
		ctx, cancel := platform.TeardownContext(ctx)
		defer cancel()
		p.mu.Lock()
		delete(p.podClusters, name)
		p.mu.Unlock()
		return cl.deleteObjects(ctx, pc.ns, ownNS, "", name, "", "")
	}
	if err := createHeadless(ctx, cl, r, pc); err != nil {
		return "", release, errors.Join(err, release(ctx))
	}
	p.mu.Lock()
	if p.podClusters == nil {
		p.podClusters = map[string]*podCluster{}
	}
	p.podClusters[name] = pc
	p.mu.Unlock()
	return name, release, nil
}

// podClusterOf is the cluster a node of network name belongs to.
func (p *Platform) podClusterOf(name string) (*podCluster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc := p.podClusters[name]; pc != nil {
		return pc, nil
	}
	return nil, fmt.Errorf("no cluster network %q was made by this platform (ClusterNetwork)", name)
}

// clusterDNS says why the cluster has no DNS a member could resolve its peers through: the
// kube-dns Service (CoreDNS and kube-dns both run behind it) with a ClusterIP.
func clusterDNS(ctx context.Context, cl *cluster) error {
	s, err := cl.cs.CoreV1().Services("kube-system").Get(ctx, "kube-dns", getOpts)
	if err != nil {
		return fmt.Errorf("a cluster on the pod network needs cluster DNS (its members name each other before their pods run), and the cluster has none: Service kube-system/kube-dns: %w (use network host, or a cluster with DNS: scripts/kube-multi.sh)", err)
	}
	if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
		return errors.New("a cluster on the pod network needs cluster DNS: Service kube-system/kube-dns has no ClusterIP")
	}
	return nil
}

// schedulable are the Ready nodes a pod can be scheduled on (no NoSchedule or NoExecute taint,
// not cordoned), sorted by name, without the client's node when one is configured.
func schedulable(ctx context.Context, cl *cluster, client string) ([]string, error) {
	l, err := cl.cs.CoreV1().Nodes().List(ctx, listAll)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var out []string
nodes:
	for i := range l.Items {
		n := &l.Items[i]
		if !nodeReady(n) || n.Spec.Unschedulable || n.Name == client {
			continue
		}
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				continue nodes
			}
		}
		out = append(out, n.Name)
	}
	if len(out) == 0 {
		return nil, errors.New("the cluster has no Ready, schedulable node for the cluster's members")
	}
	sort.Strings(out)
	return out, nil
}

// createHeadless makes the cluster's headless Service over its pods, at the database's ports.
func createHeadless(ctx context.Context, cl *cluster, r platform.Request, pc *podCluster) error {
	s := &corev1.Service{ObjectMeta: meta(r, pc.svc, "cluster"), Spec: corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
		Selector: map[string]string{LabelCluster: pc.svc}}}
	if c, ok := dbms.ClusteredOf(r.DBMS); ok {
		names := make([]string, 0, len(c.ClusterPorts()))
		for n := range c.ClusterPorts() {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			port := int32(c.ClusterPorts()[n])
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: dnsLabel(n, 15), Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)})
		}
	}
	cctx, cancel := settled(ctx)
	defer cancel()
	if _, err := cl.cs.CoreV1().Services(pc.ns).Create(cctx, s, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the cluster's headless service %s/%s: %w", pc.ns, pc.svc, err)
	}
	return ctx.Err()
}

// asMember makes the pod spec that of member r.Node of cluster pc: its own node, its stable
// name nN under the headless Service, and the search domain that resolves its peers' names.
func (b *box) asMember(spec *corev1.PodSpec, labels map[string]string) {
	pc := b.pc
	spec.Hostname = b.req.Node.Name
	spec.Subdomain = pc.svc
	spec.DNSPolicy = corev1.DNSClusterFirst
	spec.DNSConfig = &corev1.PodDNSConfig{Searches: []string{pc.svc + "." + pc.ns + ".svc." + pc.domain}}
	labels[LabelCluster] = pc.svc
}
