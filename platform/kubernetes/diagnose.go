package kubernetes

import (
	"context"
	"fmt"
	"strings"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/platform"
)

// Diagnose says what this platform can do here, for `boxbench doctor`: the cluster (server,
// version, kubeconfig), the node and whether it is this host, its runtime classes, and (for a
// local node) the containerd socket images are loaded through.
func (p *Platform) Diagnose(ctx context.Context, dbs []dbms.DBMS) []platform.Finding {
	const area = Name
	cl, err := p.reach(ctx, "")
	if err != nil {
		return []platform.Finding{{Area: area, Name: "cluster", Detail: err.Error(),
			Fix: "point kubernetes.kubeconfig (spec) or KUBECONFIG at a cluster, or bring the local one up: scripts/kube-local.sh up"}}
	}
	f := platform.Finding{Area: area, Name: "cluster", OK: true}
	if v, err := serverVersion(ctx, cl); err == nil {
		f.Detail = fmt.Sprintf("%s at %s (kubeconfig %s)", v.GitVersion, cl.rest.Host, cl.kubeconfig)
	} else {
		f.Detail = fmt.Sprintf("%s (kubeconfig %s); version: %v", cl.rest.Host, cl.kubeconfig, err)
	}
	fs := []platform.Finding{f}
	nctx, cancel := context.WithTimeout(ctx, askTimeout)
	n, err := p.node(nctx, cl)
	cancel()
	if err != nil {
		return append(fs, platform.Finding{Area: area, Name: "node", Detail: err.Error()})
	}
	local := isLocal(n)
	where := "not this host (boot id differs): hostpath, localpv and the cgroup telemetry are unavailable"
	if local {
		where = "this host"
	}
	fs = append(fs, platform.Finding{Area: area, Name: "node " + n.Name, OK: nodeReady(n), Detail: fmt.Sprintf(
		"%s; ready=%v; kubelet %s; %s; %s %s; address %s", where, nodeReady(n), n.Status.NodeInfo.KubeletVersion,
		n.Status.NodeInfo.ContainerRuntimeVersion, n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion, nodeAddress(n))})
	rcs, err := p.runtimeClasses(ctx, cl)
	rf := platform.Finding{Area: area, Name: "runtime classes", OK: err == nil}
	switch {
	case err != nil:
		rf.Detail = err.Error()
	case len(rcs) == 0:
		rf.Detail = "none (pods run with the node's default runtime; the runtime key needs a RuntimeClass)"
	default:
		rf.Detail = strings.Join(rcs, ", ")
	}
	fs = append(fs, rf)
	if local {
		sf := platform.Finding{Area: area, Name: "image loading", Fix: "apt-get install -y containerd (for ctr)"}
		if !command.Exists("ctr") {
			sf.Detail = "ctr is not installed"
		} else if !exists(p.socket(n.Name)) {
			sf.Detail, sf.Fix = "containerd socket "+p.socket(n.Name)+" is missing", "scripts/kube-local.sh up"
		} else {
			sf.OK, sf.Detail, sf.Fix = true, "docker save | ctr --address "+p.socket(n.Name)+" -n "+containerdNS+" images import -", ""
		}
		fs = append(fs, sf)
	}
	return fs
}
