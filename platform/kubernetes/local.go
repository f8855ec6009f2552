package kubernetes

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/command"
)

// node is the node the server pod goes to: the configured one, the only one, or this host's.
func (p *Platform) node(ctx context.Context, cl *cluster) (*corev1.Node, error) {
	if name := p.config().Node; name != "" {
		n, err := cl.cs.CoreV1().Nodes().Get(ctx, name, getOpts)
		if err != nil {
			return nil, fmt.Errorf("node %s (kubernetes.node): %w", name, err)
		}
		return n, nil
	}
	l, err := cl.cs.CoreV1().Nodes().List(ctx, listAll)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	if len(l.Items) == 1 {
		return &l.Items[0], nil
	}
	var names []string
	for i := range l.Items {
		if isLocal(&l.Items[i]) {
			return &l.Items[i], nil
		}
		names = append(names, l.Items[i].Name)
	}
	if len(names) == 0 {
		return nil, errors.New("the cluster has no nodes")
	}
	return nil, fmt.Errorf("the cluster has %d nodes (%s) and none is this host: name one with kubernetes.node", len(names), strings.Join(names, ", "))
}

// bootID is this kernel's boot id; a node whose kubelet reports the same one runs on this host.
// The machine id is not enough (images and clones share it); the boot id is per boot.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// isLocal says whether node n is this host.
func isLocal(n *corev1.Node) bool {
	id := bootID()
	return id != "" && n.Status.NodeInfo.BootID == id
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeAddress is the node's InternalIP (else its first address).
func nodeAddress(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	if len(n.Status.Addresses) > 0 {
		return n.Status.Addresses[0].Address
	}
	return ""
}

// socket is node's containerd socket when the node is this host: the configured one, node i's
// of the multi-node local cluster (scripts/kube-multi.sh's contract), or the single-node local
// cluster's.
func (p *Platform) socket(node string) string {
	if s := p.config().Socket; s != "" {
		return s
	}
	if s := multiSocket(node); s != "" && exists(s) {
		return s
	}
	return ContractSocket
}

// multiNode is a node name of scripts/kube-multi.sh: bbmulti-<i> in the default instance,
// bbmulti-<name>-<i> in instance <name> (its name rule: a lowercase letter, then up to 5
// lowercase letters or digits).
var multiNode = regexp.MustCompile(`^bbmulti-(?:([a-z][a-z0-9]{0,5})-)?([1-9])$`)

// multiSocket is the containerd socket of node when it is a node of scripts/kube-multi.sh
// (/run/boxbench/multi[-<name>]/n<i>/containerd.sock), else "".
func multiSocket(node string) string {
	m := multiNode.FindStringSubmatch(node)
	if m == nil {
		return ""
	}
	dir := "/run/boxbench/multi"
	if m[1] != "" {
		dir += "-" + m[1]
	}
	return dir + "/n" + m[2] + "/containerd.sock"
}

// loadImage makes the built image im present in the local node's containerd (namespace k8s.io)
// under its tag: `docker save` through the engine API piped into `ctr images import`. An image
// already there with the same config digest (the Docker image id) is not loaded again.
func (p *Platform) loadImage(ctx context.Context, node string, im image.Image) (string, error) {
	sock := p.socket(node)
	if _, err := os.Stat(sock); err != nil {
		return "", fmt.Errorf("the node is this host but its containerd socket %s is missing (set kubernetes.socket? no: the local cluster's contract path is used): %w", sock, err)
	}
	if !command.Exists("ctr") {
		return "", errors.New("ctr (Debian package containerd) is needed to load the image into the node's containerd")
	}
	ref := normalise(im.Ref)
	if id, err := p.configDigest(ctx, sock, ref); err == nil && id == im.ID {
		return "already in the node's containerd (config digest " + shortID(id) + ")", nil
	}
	rc, err := p.engine.ImageSave(ctx, []string{im.Ref})
	if err != nil {
		return "", fmt.Errorf("save image %s from the Docker engine: %w", im.Ref, err)
	}
	defer rc.Close()
	if _, err := command.RunWith(ctx, command.Options{Stdin: rc}, "ctr", "--address", sock, "-n", containerdNS, "images", "import", "-"); err != nil {
		return "", fmt.Errorf("load image %s into the node's containerd: %w", im.Ref, err)
	}
	id, err := p.configDigest(ctx, sock, ref)
	if err != nil {
		return "", fmt.Errorf("image %s after loading: %w", im.Ref, err)
	}
	if id != im.ID {
		return "", fmt.Errorf("image %s loaded into the node's containerd has config %s, not the engine's %s", im.Ref, id, im.ID)
	}
	return "loaded into the node's containerd (docker save | ctr images import)", nil
}

func shortID(id string) string {
	return strings.TrimPrefix(id, "sha256:")[:min(12, len(strings.TrimPrefix(id, "sha256:")))]
}

// normalise is an image reference as containerd names it (docker.io/ for a bare repository).
func normalise(ref string) string {
	first, _, _ := strings.Cut(ref, "/")
	if !strings.Contains(ref, "/") {
		return "docker.io/library/" + ref
	}
	if !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "docker.io/" + ref
	}
	return ref
}

// configDigest is the config digest of ref in the node's containerd: the manifest's config,
// read with ctr (images ls for the manifest digest, content get for the manifest).
func (p *Platform) configDigest(ctx context.Context, sock, ref string) (string, error) {
	out, err := command.Run(ctx, "ctr", "--address", sock, "-n", containerdNS, "images", "ls", "name=="+ref)
	if err != nil {
		return "", err
	}
	digest := manifestDigest(string(out), ref)
	if digest == "" {
		return "", fmt.Errorf("image %s is not in the node's containerd", ref)
	}
	man, err := command.Run(ctx, "ctr", "--address", sock, "-n", containerdNS, "content", "get", digest)
	if err != nil {
		return "", err
	}
	var m struct {
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
	}
	if err := json.Unmarshal(man, &m); err != nil || m.Config.Digest == "" {
		return "", fmt.Errorf("manifest %s of %s: no config digest (%v)", digest, ref, err)
	}
	return m.Config.Digest, nil
}

// manifestDigest finds ref's digest in `ctr images ls` output (REF TYPE DIGEST SIZE …).
func manifestDigest(ls, ref string) string {
	s := bufio.NewScanner(strings.NewReader(ls))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) >= 3 && f[0] == ref && strings.HasPrefix(f[2], "sha256:") {
			return f[2]
		}
	}
	return ""
}

// containerGroup finds the cgroup of the container with runtime id id on this host: the group
// of a process whose memory cgroup path names the id (the kubelet's cgroupfs and systemd
// drivers both put the id in the leaf's name). It returns the group and that process.
func containerGroup(id string) (cgroup.Ref, int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return cgroup.Ref{}, 0, err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		g, err := cgroup.OfProcess(pid)
		if err == nil && strings.Contains(filepath.Base(g.Path()), id) {
			return g, pid, nil
		}
	}
	return cgroup.Ref{}, 0, fmt.Errorf("no process of container %s found in this host's cgroups", id[:min(12, len(id))])
}

// runtimeID is the runtime's id of a container from its status ("containerd://<id>").
func runtimeID(s corev1.ContainerStatus) string {
	_, id, _ := strings.Cut(s.ContainerID, "://")
	return id
}
