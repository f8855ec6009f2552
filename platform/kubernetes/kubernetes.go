// Package kubernetes runs a database as a pod on a Kubernetes cluster through client-go: the
// cluster of a kubeconfig (the spec's kubernetes: block, or KUBECONFIG, or ~/.kube/config), so
// it works against any conformant cluster.
//
// The pod runs the same image as the Docker platform (package image), with the same start
// command and configuration, under the same limits (requests = limits: Guaranteed QoS when
// both cpus and memory are set). When the node is this host (detected by its boot id), the
// image is loaded into the node's containerd offline and the pod's cgroup is observed and
// read back here; otherwise the image is one the user names and the platform reads the limits
// back from the pod's spec and says what it cannot see.
//
// A pod has three containers: an init container ("seed") that holds the pod until the data
// directory has been filled (a seed restored on the host, or streamed in as a tar archive
// through the API), the server ("server", whose own cgroup carries the limits), and a keeper
// ("keeper", sleeping) that keeps the pod and its volumes alive after the server stopped, so
// the data of a volume the host cannot see can be captured through the API. The pod's restart
// policy is Never: a stopped server stays stopped (Box.Stop) and its data stays for Capture.
//
// A bare Pod rather than a StatefulSet: one replica, created and deleted by boxbench around
// one run; a controller would restart a server that Stop stopped, recreate a pod that Teardown
// deleted, and add an object whose deletion must be waited for too.
//
// Every object carries the labels boxbench=1, boxbench.experiment and boxbench.run (and the
// full experiment id in an annotation: a label value holds 63 characters), so Cleanup finds
// what a crashed experiment left. Spec values reach the API as object fields, never a shell.
package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/cachedir"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/spec/section"
)

// Name is the platform's name in specs.
const Name = "kubernetes"

// Storage and network choices.
const (
	StorageHostPath = "hostpath" // a hostPath volume over a host directory made like native's
	StorageLocalPV  = "localpv"  // a local PersistentVolume over such a directory, and a PVC bound to it
	StorageEmptyDir = "emptydir" // an emptyDir on the node's disk
	StorageTmpfs    = "tmpfs"    // an emptyDir with medium Memory
	// StoragePVC is the prefix of pvc:<class>: a PVC of a StorageClass the user names.
	StoragePVC = "pvc:"

	NetworkHost     = "host"     // hostNetwork
	NetworkPod      = "pod"      // the pod's IP over the CNI
	NetworkService  = "service"  // a ClusterIP service through kube-proxy
	NetworkNodePort = "nodeport" // a NodePort service on the node's address
)

// Labels and annotations on every object.
const (
	LabelBoxbench   = image.LabelBoxbench // "1"
	LabelExperiment = "boxbench.experiment"
	LabelRun        = "boxbench.run"
	LabelRole       = "boxbench.role" // "server", "client"
	LabelBox        = "boxbench.box"  // the box's own name: the service's selector
	// AnnotationExperiment holds the full experiment id (a label value holds 63 characters).
	AnnotationExperiment = "boxbench/experiment"
)

// ContractKubeconfig and ContractSocket are where scripts/kube-local.sh puts the local
// cluster's admin kubeconfig and its containerd socket.
const (
	ContractKubeconfig = "/var/lib/boxbench/kube/admin.kubeconfig"
	ContractSocket     = "/run/boxbench/kube/containerd/containerd.sock"
	containerdNS       = "k8s.io"
	// MultiKubeconfig is the admin kubeconfig of scripts/kube-multi.sh's default instance;
	// instance NAME's is /var/lib/boxbench/multi-NAME/admin.kubeconfig (multiSocket has the
	// nodes' containerd sockets).
	MultiKubeconfig = "/var/lib/boxbench/multi/admin.kubeconfig"
)

// Config is the cluster and how boxes use it: the spec's kubernetes: block.
type Config struct {
	Kubeconfig string // "" = KUBECONFIG, else ~/.kube/config, else the local cluster's contract path
	Context    string // "" = the kubeconfig's current context
	// Namespace boxes go in; "" = a namespace of each box's own, created and deleted with it.
	Namespace string
	// Node the server pod is bound to; "" = the only node, or this host's node.
	Node string
	// ClientInCluster runs the load generator in a pod (client: {platform: kubernetes}) on
	// ClientNode ("" = the server's node) instead of on this host.
	ClientInCluster bool
	ClientNode      string
	// Images are user-named image references by dbms, for nodes that are not this host.
	Images map[string]string
	// VolumeSize is the size of a pvc:<class> claim and a local PV (bytes; 0 = 8 GiB).
	VolumeSize int64
	// AgentBinary is boxbench's binary mounted into a client pod on this host ("" = this
	// process's).
	AgentBinary string
	// AgentImage is an image holding boxbench's binary (boxbench images agent builds one) that
	// the client node can run; needed for a client pod on a node that is not this host.
	AgentImage string
	// Telemetry is where the server's CPU and memory come from (Telemetries; "" = auto).
	Telemetry string
	// Socket is the node's containerd socket when the node is this host ("" = ContractSocket).
	Socket string
	// Clusters are the named clusters a cell may run on (the matrix key cluster), each a
	// kubeconfig and context; a cell without the key runs on Kubeconfig/Context.
	Clusters map[string]ClusterRef
}

// ClusterRef is one cluster of kubernetes.clusters: a kubeconfig ("" as for Config.Kubeconfig)
// and one of its contexts ("" = its current one).
type ClusterRef struct {
	Kubeconfig string `yaml:"kubeconfig"`
	Context    string `yaml:"context"`
}

// ClusterNames are the names of kubernetes.clusters, sorted: the values the spec's cluster key
// may take besides "none" (the decoded section's Clusters).
func (c Config) ClusterNames() []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(c.Clusters)) {
		if clusterNameRe.MatchString(n) { // the others are the section's problems
			out = append(out, n)
		}
	}
	return out
}

// of is the configuration of cluster name ("" = the default one): its kubeconfig and context.
func (c Config) of(name string) (Config, error) {
	if name == "" {
		return c, nil
	}
	ref, ok := c.Clusters[name]
	if !ok {
		return c, fmt.Errorf("cluster %q is not one of kubernetes.clusters (valid: %s)", name, strings.Join(c.ClusterNames(), ", "))
	}
	c.Kubeconfig, c.Context = ref.Kubeconfig, ref.Context
	return c, nil
}

// Platform is the Kubernetes platform.
type Platform struct {
	engine client.APIClient // the Docker engine the built images live in (nil: none)
	images *image.Store
	log    *slog.Logger

	mu  sync.Mutex
	cfg Config
	// links are the connections by cluster name ("" = the default cluster), each made on
	// first use from cfg.
	links map[string]*link
	// noCommands: no credential command may run (plan; see loadConfig).
	noCommands bool
	img        map[string]image.Image
	// podClusters are the clusters on the pod network whose ClusterNetwork was made and not
	// yet released, by network name.
	podClusters map[string]*podCluster
}

// New returns the platform over the Docker engine the built images live in (nil when there
// is none: then only user-named images run) with the configuration of the environment.
func New(engine client.APIClient, log *slog.Logger) *Platform {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// client-go logs through klog, to stderr by default: its lines go to boxbench's log
	// instead (klog's logger is process-wide; every platform value sets the same one).
	klog.SetSlogLogger(log)
	p := &Platform{engine: engine, log: log, img: map[string]image.Image{}}
	if engine != nil {
		p.images = image.NewStore(engine, log)
	}
	return p
}

// Configure sets the cluster and how boxes use it (the spec's kubernetes: block). It drops the
// connection made for an earlier configuration.
func (p *Platform) Configure(c Config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg, p.links = c, nil
}

// NoCredentialCommands makes the platform refuse a kubeconfig context that authenticates with
// an exec plugin or an auth-provider, whoever wrote it: `plan` never runs a program. It drops
// the connection made before.
func (p *Platform) NoCredentialCommands() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noCommands, p.links = true, nil
}

func (p *Platform) config() Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// Info: storages and networks; boxes are groups on this host's tree only when the node is this
// host, which the description cannot know, so HostCgroup is false (Observe says per box).
func (p *Platform) Info() platform.Info {
	return platform.Info{Name: Name, Cluster: p, Diagnoser: p, BoxCleaner: p, Settings: p, Commands: p, Leftovers: p,
		Setup:    []string{"kubernetes", "docker", "images"}, // the local cluster's; its images come from Docker's engine
		Storages: []string{StorageHostPath, StorageLocalPV, StorageEmptyDir, StorageTmpfs, StoragePVC},
		Networks: []string{NetworkHost, NetworkPod, NetworkService, NetworkNodePort}, Runtimes: true, NamedClusters: true,
		Fallback: map[string]string{"bind": StorageHostPath}, Client: true,
		StorageParams: map[string]section.Param{StoragePVC: {What: "StorageClass name", Example: "standard"}}}
}

// kubeconfigPath is the kubeconfig used: the configured one, KUBECONFIG's first entry,
// ~/.kube/config, or the local cluster's contract path, whichever exists first.
func kubeconfigPath(c Config) string {
	if c.Kubeconfig != "" {
		return c.Kubeconfig
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return strings.Split(env, string(os.PathListSeparator))[0]
	}
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, ".kube", "config"); exists(p) {
			return p
		}
	}
	return ContractKubeconfig
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// cluster is a connection to one cluster.
type cluster struct {
	name       string // its name in kubernetes.clusters, "" for the default cluster
	kubeconfig string
	context    string
	rest       *rest.Config
	cs         kubernetes.Interface
}

// link is what the platform keeps of one cluster: the connection or why it could not be made,
// and the last failure to reach it (see reach).
type link struct {
	conn        *cluster
	err         error
	unreachable *failure
}

// connect returns the connection to cluster name ("" = the default one), made once per
// configuration.
func (p *Platform) connect(name string) (*cluster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.links[name]; l != nil {
		return l.conn, l.err
	}
	if p.links == nil {
		p.links = map[string]*link{}
	}
	l := &link{}
	p.links[name] = l
	cfg, err := p.cfg.of(name)
	if err != nil {
		l.err = err
		return nil, err
	}
	field := "kubernetes.kubeconfig"
	if name != "" {
		field = "kubernetes.clusters." + name + ".kubeconfig"
	}
	rc, path, err := loadConfig(cfg, field, p.noCommands)
	if err != nil {
		l.err = fmt.Errorf("kubeconfig %s: %w", path, err)
		return nil, l.err
	}
	rc.Timeout = 0 // requests are bounded by their contexts
	rc.QPS, rc.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		l.err = fmt.Errorf("kubeconfig %s: %w", path, err)
		return nil, l.err
	}
	l.conn = &cluster{name: name, kubeconfig: path, context: cfg.Context, rest: rc, cs: cs}
	return l.conn, nil
}

// localDown says err is about the local cluster's kubeconfig (at path) and that file is absent:
// the cluster is not up, and `make kube-up` brings it up (building its components first where
// they are not cached).
func localDown(err error, path string) bool {
	_, serr := os.Stat(path)
	return errors.Is(serr, fs.ErrNotExist) && strings.Contains(err.Error(), path)
}

// Typical times of `make kube-up` on a 2-vCPU host (docs/ci.md): the components built from
// source, 13–41 min cold; with the build cached, the cluster's start (14–35 s).
const (
	typicalKubeBuild = 25 * time.Minute
	typicalKubeUp    = 30 * time.Second
)

// localClusterNeed is the prerequisite of a cell on the local cluster when it is not up.
func localClusterNeed() prereq.Need {
	n := prereq.Need{What: "the local Kubernetes cluster is not up", Command: "make kube-up",
		Takes: typicalKubeBuild, Basis: prereq.Typical + ", its components built from source first"}
	if vs, _ := filepath.Glob(filepath.Join(cachedir.Path("kube"), "v*")); len(vs) > 0 {
		n.Takes, n.Basis = typicalKubeUp, prereq.Typical+", its build cached"
	}
	return n
}

// reach checks that the API server of cluster name answers, naming the kubeconfig when it
// does not.
func (p *Platform) reach(ctx context.Context, name string) (*cluster, error) {
	c, err := p.connect(name)
	if err != nil && localDown(err, ContractKubeconfig) {
		return nil, prereq.New(localClusterNeed(), fmt.Errorf("no reachable cluster: %w", err))
	}
	if err != nil {
		where := "set kubernetes.kubeconfig in the spec or KUBECONFIG"
		if name != "" {
			where = "kubernetes.clusters." + name
		}
		if strings.Contains(err.Error(), where) {
			return nil, fmt.Errorf("no reachable cluster: %w", err)
		}
		return nil, fmt.Errorf("no reachable cluster: %w (%s)", err, where)
	}
	p.mu.Lock()
	l := p.links[name]
	failed := l.unreachable
	p.mu.Unlock()
	if failed != nil && time.Since(failed.at) < unreachableFor {
		return nil, failed.err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.cs.CoreV1().Namespaces().List(ctx, listOne); err != nil {
		err = fmt.Errorf("no reachable cluster at %s (kubeconfig %s): %w", c.rest.Host, c.kubeconfig, err)
		if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			p.mu.Lock()
			l.unreachable = &failure{err: err, at: time.Now()}
			p.mu.Unlock()
		}
		return nil, err
	}
	return c, nil
}

// askTimeout bounds the questions Check and Diagnose ask a reachable cluster together.
const askTimeout = 30 * time.Second

// unreachableFor is how long a cluster that did not answer is not asked again: a plan of many
// kubernetes cells would otherwise wait the 10 s timeout once per cell.
const unreachableFor = time.Minute

type failure struct {
	err error
	at  time.Time
}

// Check says why c cannot run here: storages and networks this platform or this cluster lacks,
// a runtime class the cluster does not have, a node that is not this host where the choice
// needs it, an image that cannot be had.
func (p *Platform) Check(ctx context.Context, c platform.Choice) error {
	var errs []error
	if !p.Info().Offers(c.Storage, c.Network) {
		errs = append(errs, fmt.Errorf("kubernetes offers storage hostpath, localpv, emptydir, tmpfs, pvc:<class> and network host, pod, service, nodeport, not storage=%s network=%s", c.Storage, c.Network))
	}
	cl, err := p.reach(ctx, c.Cluster)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	// Only questions follow (node, classes): a cluster that answered reach and then goes
	// silent must not hang plan (the rest config has no timeout; requests take their contexts).
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	n, err := p.node(ctx, cl)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	local := isLocal(n)
	if !local {
		switch c.Storage {
		case StorageHostPath, StorageLocalPV:
			errs = append(errs, fmt.Errorf("storage %s needs the node to be this host (node %s is not: its boot id differs)", c.Storage, n.Name))
		}
		if c.Network == NetworkPod && !p.config().ClientInCluster {
			errs = append(errs, fmt.Errorf("network pod from a client on this host needs this host to be the node (node %s is not); run the client in the cluster (client: {platform: kubernetes})", n.Name))
		}
	}
	if strings.HasPrefix(c.Storage, StoragePVC) {
		class := strings.TrimPrefix(c.Storage, StoragePVC)
		if _, err := cl.cs.StorageV1().StorageClasses().Get(ctx, class, getOpts); err != nil {
			errs = append(errs, fmt.Errorf("storage %s: StorageClass %q: %w", c.Storage, class, err))
		}
	}
	if c.Runtime != "" {
		if _, err := cl.cs.NodeV1().RuntimeClasses().Get(ctx, c.Runtime, getOpts); err != nil {
			names, _ := p.runtimeClasses(ctx, cl)
			errs = append(errs, fmt.Errorf("runtime %q is not a RuntimeClass of the cluster (registered: %s): %v", c.Runtime, strings.Join(names, ", "), err))
		}
	}
	if c.DBMS != nil {
		if local {
			if p.images == nil && p.config().Images[c.DBMS.Name()] == "" {
				errs = append(errs, fmt.Errorf("no Docker engine to take the built %s image from (or name one under kubernetes.images)", c.DBMS.Name()))
			} else if p.config().Images[c.DBMS.Name()] == "" {
				// The node loads the Docker platform's built image: not built yet is a
				// prerequisite (images build), found at plan time rather than at provision.
				if _, err := p.Image(ctx, c.DBMS); err != nil {
					errs = append(errs, err)
				}
			}
		} else if p.config().Images[c.DBMS.Name()] == "" {
			errs = append(errs, fmt.Errorf("node %s is not this host, so boxbench cannot load its image there: name an image the node can pull under kubernetes.images.%s", n.Name, c.DBMS.Name()))
		}
	}
	return errors.Join(errs...)
}

func (p *Platform) runtimeClasses(ctx context.Context, cl *cluster) ([]string, error) {
	l, err := cl.cs.NodeV1().RuntimeClasses().List(ctx, listAll)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, rc := range l.Items {
		names = append(names, rc.Name+" (handler "+rc.Handler+")")
	}
	slices.Sort(names)
	return names, nil
}

// Image returns the image boxes of d run on a node that is this host: a user-named one, or the
// one boxbench built for the Docker platform (the same image).
func (p *Platform) Image(ctx context.Context, d dbms.DBMS) (image.Image, error) {
	p.mu.Lock()
	im, ok := p.img[d.Name()]
	ref := p.cfg.Images[d.Name()]
	p.mu.Unlock()
	if ok {
		return im, nil
	}
	if p.images == nil {
		if ref != "" {
			return image.Image{Ref: ref, DBMS: d.Name(), UserNamed: true, ServerPackage: d.ServerPackage(), User: d.User()}, nil
		}
		return im, errors.New("no Docker engine to take the built image from")
	}
	im, err := p.images.For(ctx, ref, d)
	if err != nil {
		return im, err
	}
	p.mu.Lock()
	p.img[d.Name()] = im
	p.mu.Unlock()
	return im, nil
}

// Provision creates the box's objects, fills its storage, starts the server and waits for it.
// On error everything it created is removed and the error carries the server's log tail.
func (p *Platform) Provision(ctx context.Context, r platform.Request) (platform.Box, error) {
	if r.Log == nil {
		r.Log = p.log
	}
	b := &box{p: p, req: r, cfg: p.config(), facts: map[string]string{"platform": Name}}
	if err := b.provision(ctx); err != nil {
		return nil, fmt.Errorf("kubernetes %s/%s: %w", r.Storage, r.Network, platform.Undo(ctx, b, err))
	}
	return b, nil
}
