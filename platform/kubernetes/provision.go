package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
)

// Container names in the server pod.
const (
	ctrSeed   = "seed"
	ctrServer = "server"
	ctrKeeper = "keeper"
)

// seedGate is the file whose creation lets the seed init container end (and so the server
// start): boxbench creates it once the data directory is filled.
const seedGate = platform.BoxDataMount + "/.boxbench-filled"

// helperCPU and helperMemory are the requests = limits of the keeper container (a Guaranteed
// pod needs limits on every container): it sleeps, and archives the data for Capture. The seed
// init container gets the server's own (an init container's requests do not add to the
// pod's), so a seed is extracted at the server's speed.
var (
	helperCPU    = kres.MustParse("100m")
	helperMemory = kres.MustParse("64Mi")
)

const (
	defaultVolumeSize int64 = 8 << 30
	podStartTimeout         = 5 * time.Minute // image pull of a user-named image, volume binding
)

func (b *box) provision(ctx context.Context) error {
	r := b.req
	if err := os.MkdirAll(r.WorkDir, 0o755); err != nil {
		return err
	}
	cl, err := b.p.reach(ctx, r.Cluster)
	if err != nil {
		return err
	}
	b.cl = cl
	if r.Node != nil && r.Network == NetworkPod {
		err = b.member(ctx)
	} else {
		b.node, err = b.p.node(ctx, cl)
	}
	if err != nil {
		return err
	}
	b.local = isLocal(b.node)
	b.hostNetns = inHostNetns(b.node)
	b.facts["ran_on"] = "kubernetes node " + b.node.Name + " (" + nodeAddress(b.node) + ")"
	for k, v := range clusterFacts(ctx, cl, b.node) {
		b.facts[k] = v
	}
	b.facts["cluster"] = cl.rest.Host
	if cl.name != "" {
		b.facts["kubernetes_cluster"] = cl.name // the cell's cluster key, as the platform resolved it
	}
	b.orch = orchestrator(b.facts)
	b.facts["kubeconfig"] = cl.kubeconfig
	b.facts["node"] = b.node.Name
	b.facts["node_is_this_host"] = strconv.FormatBool(b.local)
	b.facts["kubelet"] = b.node.Status.NodeInfo.KubeletVersion
	b.facts["container_runtime"] = b.node.Status.NodeInfo.ContainerRuntimeVersion
	if err := b.image(ctx); err != nil {
		return err
	}
	if b.name, err = objectName(r); err != nil {
		return err
	}
	if err := b.namespace(ctx); err != nil {
		return err
	}
	b.layout = dbms.Layout{DataDir: platform.BoxDataDir, RunDir: platform.BoxRunDir, Listen: "0.0.0.0", Port: r.DBMS.DefaultPort()}
	if r.Network == NetworkHost && r.Node != nil {
		// A cluster's node listens where its peers were told it does (platform.Node): ports
		// package cluster reserved on this host, so the node must be this host.
		if !b.hostNetns {
			return fmt.Errorf("node %s of a cluster on network host: kubernetes node %s is not in this host's network namespace, where the cluster's ports were reserved and its peers are named 127.0.0.1", r.Node.Name, b.node.Name)
		}
		if b.layout.Port = r.Node.Ports[dbms.PortClient]; b.layout.Port == 0 {
			return fmt.Errorf("node %s has no client port", r.Node.Name)
		}
		if !b.cfg.ClientInCluster {
			b.layout.Listen = "127.0.0.1"
		}
	} else if r.Network == NetworkHost {
		// The node's own network namespace: a port free on this host when it is this
		// namespace; in another (a node of the multi-node cluster) the server listens on every
		// address at its default port, reached at the node's address.
		if b.hostNetns {
			if b.layout.Port, err = platform.FreePort(); err != nil {
				return err
			}
			if !b.cfg.ClientInCluster {
				b.layout.Listen = "127.0.0.1"
			}
		}
	}
	vol, err := b.prepareStorage(ctx)
	if err != nil {
		return err
	}
	settings := dbms.Settings{MemoryBytes: r.Resources.MemoryBytes}
	files := r.DBMS.ConfigFiles(settings)
	b.facts["config_hash"] = dbms.TemplateHash(r.DBMS, settings)
	if b.hostDir != "" && r.Seed != nil {
		if err := b.restoreHost(ctx, r.Seed.Dir, files); err != nil {
			return err
		}
		files = nil // written
	}
	if err := b.createService(ctx); err != nil {
		return err
	}
	if err := b.createPod(ctx, vol); err != nil {
		return err
	}
	b.watch()
	if err := b.waitContainer(ctx, ctrSeed, true); err != nil {
		return err
	}
	if err := b.fill(ctx, files); err != nil {
		return err
	}
	if err := b.waitContainer(ctx, ctrServer, false); err != nil {
		return err
	}
	if err := b.started(ctx); err != nil {
		return err
	}
	return platform.WaitReady(ctx, r.DBMS, b.ep, b.exited, func() error { return b.exitErr })
}

// member places a node of a cluster on the pod network: the Kubernetes node of its own that
// ClusterNetwork chose, and (for the first member, whose site the cluster's client uses) the
// client's node.
func (b *box) member(ctx context.Context) error {
	pc, err := b.p.podClusterOf(b.req.Node.Network)
	if err != nil {
		return err
	}
	b.pc = pc
	name, err := pc.memberNode(b.req.Node.Index, b.req.Node.Count)
	if err != nil {
		return err
	}
	if b.node, err = b.cl.cs.CoreV1().Nodes().Get(ctx, name, getOpts); err != nil {
		return fmt.Errorf("node %s for member %s: %w", name, b.req.Node.Name, err)
	}
	if b.cfg.ClientInCluster {
		var w *platform.Warning
		b.clientAt, w = pc.clientNode(b.cfg.ClientNode, b.req.Node.Count)
		if w != nil && b.req.Node.Index == 0 {
			b.warns = append(b.warns, *w)
		}
	}
	return nil
}

// image resolves and, on a local node, loads the server's image.
func (b *box) image(ctx context.Context) error {
	d := b.req.DBMS
	if !b.local {
		ref := b.cfg.Images[d.Name()]
		if ref == "" {
			return fmt.Errorf("node %s is not this host: name an image it can pull under kubernetes.images.%s", b.node.Name, d.Name())
		}
		b.img = image.Image{Ref: ref, DBMS: d.Name(), UserNamed: true, ServerPackage: d.ServerPackage(), User: d.User()}
		b.pull = corev1.PullIfNotPresent
		b.facts["image"] = ref
		b.facts["image_user_named"] = "true"
		b.facts["image_load"] = "pulled by the node (user-named)"
		b.warns = append(b.warns, platform.Warning{Code: "version", Message: "image " + ref + " was named by the user for a remote node: its server version is not checked against native"})
		return nil
	}
	im, err := b.p.Image(ctx, d)
	if err != nil {
		return err
	}
	b.img = im
	for k, v := range im.Facts() {
		b.facts[k] = v
	}
	for i, w := range im.Warnings {
		b.warns = append(b.warns, platform.Warning{Code: "image_" + strconv.Itoa(i), Message: w})
	}
	if err := image.CheckNative(ctx, im); err != nil && ctx.Err() == nil {
		b.warns = append(b.warns, platform.Warning{Code: "version", Message: err.Error()})
	} else if err == nil {
		b.facts["version_check"] = "native and image both run " + im.ServerPackage + " " + im.ServerVersion
	}
	how, err := b.p.loadImage(ctx, b.node.Name, im)
	if err != nil {
		return err
	}
	b.facts["image_load"] = how
	b.pull = corev1.PullNever
	return nil
}

// namespace uses the configured namespace (which must exist: boxbench never deletes a
// namespace it did not create) or creates one of the box's own.
func (b *box) namespace(ctx context.Context) error {
	if b.pc != nil {
		b.ns = b.pc.ns
		b.facts["namespace"] = b.ns + " (the cluster's, with its headless service " + b.pc.svc + ")"
		return nil
	}
	if ns := b.cfg.Namespace; ns != "" {
		if _, err := b.cl.cs.CoreV1().Namespaces().Get(ctx, ns, getOpts); err != nil {
			return fmt.Errorf("namespace %s (kubernetes.namespace): %w (create it, or leave kubernetes.namespace out for a namespace per box)", ns, err)
		}
		b.ns = ns
		b.facts["namespace"] = ns
		return nil
	}
	cctx, cancel := settled(ctx)
	defer cancel()
	_, err := b.cl.cs.CoreV1().Namespaces().Create(cctx, &corev1.Namespace{ObjectMeta: meta(b.req, b.name, "namespace")}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", b.name, err)
	}
	b.ns, b.ownNS = b.name, true
	b.facts["namespace"] = b.name + " (the box's own)"
	return b.waitServiceAccount(ctx)
}

// waitServiceAccount waits for the new namespace's default service account: the API refuses
// pods in a namespace before its controller made it.
func (b *box) waitServiceAccount(ctx context.Context) error {
	for {
		_, err := b.cl.cs.CoreV1().ServiceAccounts(b.ns).Get(ctx, "default", getOpts)
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s: default service account: %w", b.ns, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %s has no default service account yet: %w", b.ns, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// settled gives an API call that creates something a context that a cancellation (Ctrl-C) does
// not cut short: a create the server completes after the client gave up would leave an object
// nobody knows. Creates are quick; the caller checks ctx right after.
func settled(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

func (b *box) volumeSize() int64 {
	if b.cfg.VolumeSize > 0 {
		return b.cfg.VolumeSize
	}
	return defaultVolumeSize
}

// prepareStorage makes the storage and returns the pod's data volume.
func (b *box) prepareStorage(ctx context.Context) (corev1.Volume, error) {
	r := b.req
	v := corev1.Volume{Name: "data"}
	b.facts["storage"] = r.Storage
	switch {
	case r.Storage == StorageHostPath || r.Storage == StorageLocalPV:
		if !b.local {
			return v, fmt.Errorf("storage %s needs the node to be this host (node %s is not)", r.Storage, b.node.Name)
		}
		// The same host directory as native's and Docker's bind (storage.Prepare), so the
		// comparison is of the volume path, not of two directories.
		st, err := storage.Prepare(context.WithoutCancel(ctx), storage.Bind, r.WorkDir, r.StorageOpts.Host(storage.Bind))
		if err != nil {
			return v, err
		}
		b.store, b.hostDir = st, st.Path
		for k, val := range st.Facts {
			b.facts["storage_"+k] = val
		}
		if r.Storage == StorageHostPath {
			t := corev1.HostPathDirectory
			v.HostPath = &corev1.HostPathVolumeSource{Path: st.Path, Type: &t}
			b.facts["storage_mount"] = "hostPath " + st.Path + " on " + platform.BoxDataMount
			return v, nil
		}
		if err := b.createLocalPV(ctx, st.Path); err != nil {
			return v, err
		}
		v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: b.pvc}
		b.facts["storage_mount"] = "local PersistentVolume " + b.pv + " (" + st.Path + ") through claim " + b.pvc + " on " + platform.BoxDataMount
		return v, nil
	case r.Storage == StorageEmptyDir:
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
		b.facts["storage_mount"] = "emptyDir (the node's kubelet directory) on " + platform.BoxDataMount
		return v, nil
	case r.Storage == StorageTmpfs:
		size := r.StorageOpts.TmpfsSize
		if size <= 0 {
			size = storage.DefaultTmpfsSize
		}
		v.EmptyDir = &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: kres.NewQuantity(size, kres.BinarySI)}
		b.facts["storage_mount"] = "emptyDir medium Memory (tmpfs), sizeLimit " + strconv.FormatInt(size, 10) + " B, on " + platform.BoxDataMount
		b.facts["storage_tmpfs"] = "the kubelet's tmpfs: its pages are charged to the pod's memory cgroup (unlike native's host tmpfs)"
		return v, nil
	case strings.HasPrefix(r.Storage, StoragePVC):
		class := strings.TrimPrefix(r.Storage, StoragePVC)
		if err := b.createPVC(ctx, class, ""); err != nil {
			return v, err
		}
		v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: b.pvc}
		b.facts["storage_mount"] = "claim " + b.pvc + " of StorageClass " + class + " on " + platform.BoxDataMount
		b.facts["storage_class"] = class
		return v, nil
	}
	return v, fmt.Errorf("kubernetes does not support storage %q (valid: hostpath, localpv, emptydir, tmpfs, pvc:<class>)", r.Storage)
}

// createLocalPV makes a local PersistentVolume over the host directory dir, pinned to the node,
// and a claim bound to it by name (no StorageClass: nothing else may take either).
func (b *box) createLocalPV(ctx context.Context, dir string) error {
	fs := corev1.PersistentVolumeFilesystem
	pv := &corev1.PersistentVolume{ObjectMeta: meta(b.req, b.name, "data"), Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: *kres.NewQuantity(b.volumeSize(), kres.BinarySI)},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain, // boxbench removes the directory itself
		StorageClassName:              "",
		VolumeMode:                    &fs,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{b.node.Name}}}}}}},
	}}
	cctx, cancel := settled(ctx)
	defer cancel()
	if _, err := b.cl.cs.CoreV1().PersistentVolumes().Create(cctx, pv, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create local PersistentVolume %s: %w", b.name, err)
	}
	b.setPV(b.name)
	return b.createPVC(ctx, "", b.name)
}

// createPVC makes the box's claim: of StorageClass class, or bound to PersistentVolume pv.
func (b *box) createPVC(ctx context.Context, class, pv string) error {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: meta(b.req, b.name, "data"), Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: &class, // "" with a volume name: bound to it, never to a default class
		VolumeName:       pv,
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: *kres.NewQuantity(b.volumeSize(), kres.BinarySI)}},
	}}
	cctx, cancel := settled(ctx)
	defer cancel()
	if _, err := b.cl.cs.CoreV1().PersistentVolumeClaims(b.ns).Create(cctx, c, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create PersistentVolumeClaim %s: %w", b.name, err)
	}
	b.setPVC(b.name)
	return ctx.Err()
}

// createService makes the ClusterIP or NodePort service of network=service/nodeport.
func (b *box) createService(ctx context.Context) error {
	var typ corev1.ServiceType
	switch b.req.Network {
	case NetworkService:
		typ = corev1.ServiceTypeClusterIP
	case NetworkNodePort:
		typ = corev1.ServiceTypeNodePort
	case NetworkHost, NetworkPod:
		return nil
	default:
		return fmt.Errorf("kubernetes does not support network %q (valid: host, pod, service, nodeport)", b.req.Network)
	}
	s := &corev1.Service{ObjectMeta: meta(b.req, b.name, "server"), Spec: corev1.ServiceSpec{Type: typ,
		Selector: map[string]string{LabelBox: b.name},
		Ports: []corev1.ServicePort{{Name: "db", Protocol: corev1.ProtocolTCP, Port: int32(b.layout.Port),
			TargetPort: intstr.FromInt32(int32(b.layout.Port))}}}}
	cctx, cancel := settled(ctx)
	defer cancel()
	if _, err := b.cl.cs.CoreV1().Services(b.ns).Create(cctx, s, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s: %w", b.name, err)
	}
	b.setSvc(b.name)
	return ctx.Err()
}

// limits are the server container's requests = limits, with what could not be said exactly.
func (b *box) limits() (corev1.ResourceRequirements, error) {
	l := b.req.Resources
	rl := corev1.ResourceList{}
	if l.CPUs > 0 {
		milli := int64(math.Round(l.CPUs * 1000))
		if math.Abs(float64(milli)/1000-l.CPUs) > 1e-9 {
			return corev1.ResourceRequirements{}, fmt.Errorf("limits.cpus %g: Kubernetes takes CPU in thousandths (millicores)", l.CPUs)
		}
		rl[corev1.ResourceCPU] = *kres.NewMilliQuantity(milli, kres.DecimalSI)
	}
	if l.MemoryBytes > 0 {
		rl[corev1.ResourceMemory] = *kres.NewQuantity(l.MemoryBytes, kres.BinarySI)
	}
	if l.CPUs > 0 && l.MemoryBytes > 0 {
		b.facts["qos"] = "Guaranteed (requests = limits)"
	} else {
		b.facts["qos"] = "not Guaranteed: limits.cpus and limits.memory are not both set"
		b.warns = append(b.warns, platform.Warning{Code: "qos_not_guaranteed",
			Message: "the server pod is not Guaranteed QoS (set limits.cpus and limits.memory): the kubelet may throttle or evict it differently from a native process"})
	}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}, nil
}

// seedResources are the server's requests = limits, each completed by the helper's.
func seedResources(server corev1.ResourceRequirements) corev1.ResourceRequirements {
	rl := server.Limits.DeepCopy()
	if rl == nil {
		rl = corev1.ResourceList{}
	}
	if _, ok := rl[corev1.ResourceCPU]; !ok {
		rl[corev1.ResourceCPU] = helperCPU
	}
	if _, ok := rl[corev1.ResourceMemory]; !ok {
		rl[corev1.ResourceMemory] = helperMemory
	}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

func helperResources() corev1.ResourceRequirements {
	rl := corev1.ResourceList{corev1.ResourceCPU: helperCPU, corev1.ResourceMemory: helperMemory}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

// asUser runs argv as the server's account (named: a user-named image's numeric ids are not
// known), with that account's groups: the containers run as root so that Exec is root.
func asUser(user string, argv []string) []string {
	return append([]string{"setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "--"}, argv...)
}

// createPod makes the server pod.
func (b *box) createPod(ctx context.Context, data corev1.Volume) error {
	r := b.req
	res, err := b.limits()
	if err != nil {
		return err
	}
	argv := r.DBMS.StartCommand(b.layout)
	b.facts["command"] = strings.Join(argv, " ")
	b.facts["user"] = r.DBMS.User() + " (setpriv from a root container, so that Exec is root)"
	shm := int64(1 << 30)
	if r.Resources.MemoryBytes > 0 {
		shm = r.Resources.MemoryBytes
	}
	b.facts["shm_bytes"] = strconv.FormatInt(shm, 10)
	root := int64(0)
	sc := &corev1.SecurityContext{RunAsUser: &root, RunAsGroup: &root}
	dataMount := corev1.VolumeMount{Name: "data", MountPath: platform.BoxDataMount}
	grace := int64(60)
	no := false
	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		TerminationGracePeriodSeconds: &grace,
		EnableServiceLinks:            &no,
		AutomountServiceAccountToken:  &no,
		Affinity:                      onNode(b.node.Name),
		Volumes: []corev1.Volume{data,
			{Name: "run", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory,
				SizeLimit: kres.NewQuantity(shm, kres.BinarySI)}}}},
		InitContainers: []corev1.Container{{Name: ctrSeed, Image: b.img.Ref, ImagePullPolicy: b.pull, SecurityContext: sc,
			// Holds the pod until boxbench has filled the data directory (Box.fill).
			Command:      []string{"sh", "-c", `while [ ! -e "$1" ]; do sleep 0.1; done; rm -f "$1"`, "sh", seedGate},
			VolumeMounts: []corev1.VolumeMount{dataMount}, Resources: seedResources(res)}},
		Containers: []corev1.Container{
			{Name: ctrServer, Image: b.img.Ref, ImagePullPolicy: b.pull, SecurityContext: sc, WorkingDir: "/",
				// The run directory (an emptyDir) is handed to the server's account, then the
				// server replaces the shell as the container's process 1 (Stop signals it).
				Command: append([]string{"sh", "-c", `chown "$1" "$2" && shift 2 && exec "$@"`, "sh", r.DBMS.User(), platform.BoxRunDir}, asUser(r.DBMS.User(), argv)...),
				Ports:   []corev1.ContainerPort{{Name: "db", ContainerPort: int32(b.layout.Port), Protocol: corev1.ProtocolTCP}},
				VolumeMounts: []corev1.VolumeMount{dataMount, {Name: "run", MountPath: platform.BoxRunDir},
					{Name: "shm", MountPath: "/dev/shm"}},
				Resources: res},
			{Name: ctrKeeper, Image: b.img.Ref, ImagePullPolicy: b.pull, SecurityContext: sc,
				// Keeps the pod, and so its volumes, after the server stopped: Capture reads them here.
				Command:      []string{"sleep", "infinity"},
				VolumeMounts: []corev1.VolumeMount{dataMount}, Resources: helperResources()},
		},
	}
	if r.Network == NetworkHost {
		spec.HostNetwork = true
		spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	if r.Runtime != "" {
		rt := r.Runtime
		spec.RuntimeClassName = &rt
	}
	pod := &corev1.Pod{ObjectMeta: meta(r, b.name, "server"), Spec: spec}
	if b.pc != nil {
		b.asMember(&pod.Spec, pod.Labels)
	}
	cctx, cancel := settled(ctx)
	defer cancel()
	if _, err := b.cl.cs.CoreV1().Pods(b.ns).Create(cctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create pod %s: %w", b.name, err)
	}
	b.setPod(b.name)
	b.facts["pod"] = b.ns + "/" + b.name
	b.facts["network"] = r.Network
	return ctx.Err()
}

// onNode pins a pod to node through the scheduler (not spec.nodeName, which skips it and so the
// binding of a WaitForFirstConsumer claim).
func onNode(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}}
}

// waitContainer waits until container name of the pod runs (init: an init container).
func (b *box) waitContainer(ctx context.Context, name string, init bool) error {
	ctx, cancel := context.WithTimeout(ctx, podStartTimeout)
	defer cancel()
	var last string
	for {
		pod, err := b.cl.cs.CoreV1().Pods(b.ns).Get(ctx, b.name, getOpts)
		if err == nil {
			sts := pod.Status.ContainerStatuses
			if init {
				sts = pod.Status.InitContainerStatuses
			}
			for _, s := range sts {
				if s.Name != name {
					continue
				}
				switch {
				case s.State.Running != nil:
					return nil
				case s.State.Terminated != nil && !init:
					t := s.State.Terminated
					return fmt.Errorf("container %s ended at once: %s (exit code %d) %s", name, t.Reason, t.ExitCode, t.Message)
				case s.State.Waiting != nil:
					last = s.State.Waiting.Reason + " " + s.State.Waiting.Message
				}
			}
			if pod.Status.Phase == corev1.PodFailed {
				return fmt.Errorf("pod %s failed: %s %s", b.name, pod.Status.Reason, pod.Status.Message)
			}
			if last == "" {
				last = podConditions(pod)
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("container %s of pod %s/%s did not start within %s (last: %s; events: %s)", name, b.ns, b.name, podStartTimeout, last, b.events(context.WithoutCancel(ctx)))
			}
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func podConditions(pod *corev1.Pod) string {
	var s []string
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			s = append(s, string(c.Type)+": "+c.Reason+" "+c.Message)
		}
	}
	return string(pod.Status.Phase) + " " + strings.Join(s, "; ")
}

// events are the warnings the cluster recorded about the box's objects (why a pod is pending).
func (b *box) events(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err := b.cl.cs.CoreV1().Events(b.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var s []string
	for _, e := range l.Items {
		if e.Type == corev1.EventTypeWarning {
			s = append(s, e.InvolvedObject.Kind+" "+e.InvolvedObject.Name+": "+e.Reason+": "+e.Message)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s[max(0, len(s)-5):], "; ")
}
