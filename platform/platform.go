// Package platform is the seam between the runner and every kind of box: a host process, a
// container, an LXC container, a VM guest, a pod. The runner, telemetry and report see only
// this package's types; nothing outside a platform's own package and the wiring (package
// builtin) knows which platform ran a box.
//
// A platform
//   - describes itself (Info): its storages, networks, whether it takes an OCI runtime, whether
//     its boxes are control groups on this host's tree, how it can load a seed — spec
//     validation takes its vocabulary from these descriptions;
//   - provisions a box with storage, network, runtime and all resources, applies the resources
//     in its own terms and reads back what took effect (Box.Applied);
//   - says how a box can be observed (Box.Observe) and what cannot be seen;
//   - moves data in (Request.Seed) and out (Box.Capture) as snapshots;
//   - tears down idempotently and removes what crashed experiments left (Cleanup).
//
// Every platform passes the conformance suite in testkit/platformtest.
package platform

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/spec/section"
)

// Info describes a platform.
type Info struct {
	Name string
	// Storages and Networks are the values of the storage and network keys this platform
	// offers (whether this host can run each is Check's answer).
	Storages []string
	Networks []string
	// Runtimes says the platform takes the runtime key: an open vocabulary (whatever an engine
	// has registered), probed by Check and Probe.
	Runtimes bool
	// Client says the spec's client.platform may name this platform: the load generator then
	// runs in a place of the platform's own (kubernetes: a pod, on the node client.node names),
	// which its section learns from the spec's client: block (section.Context).
	Client bool
	// StorageParams say what the parameter of each parametric storage (an entry of Storages
	// ending in ':', "pvc:") names, with an example, for spec validation's words.
	StorageParams map[string]section.Param
	// NamedClusters says the platform runs a cell on the cluster its cluster key names
	// (Choice.Cluster); a platform without it refuses a cell that names one.
	NamedClusters bool
	// HostCgroup says its boxes are control groups on this host's cgroup tree, so the host sees
	// their CPU, memory and I/O directly.
	HostCgroup bool
	// Load is the storage and network a box of this platform uses to load a data set into a
	// seed; nil when the platform cannot load seeds. The runner prefers the baseline's platform.
	Load *Choice
	// Fallback maps a storage this platform lacks to its closest equivalent, for neighbours
	// whose storage is "same as the measured box" (a host process has no container layer: its
	// closest equivalent is a host directory).
	Fallback map[string]string

	// Setup are the steps of scripts/setup.sh (`make setup STEPS=…`) its boxes need on this
	// host, beyond the database's own step; "images" among them says its boxes are made from a
	// database's root filesystem (`boxbench images build`). `boxbench setup SPEC` reads them.
	Setup []string

	// What the platform can do beyond the Platform methods, each nil where it cannot (kind's
	// ProviderInfo in spirit): callers read these fields, never type-assert a platform, so a
	// wrapper that embeds a platform keeps them all and one that changes a capability
	// replaces that field. The platform usually sets each to itself.

	// Cluster: its boxes can be the nodes of a cluster (Request.Node); nil refuses topologies
	// (spec validation and cluster.Check say so).
	Cluster Clusterer
	// Prober: some abilities need a real trial (a runtime registered but failing on this
	// kernel); nil when Check is the whole answer.
	Prober Prober
	// Diagnoser: the platform has lines for `boxbench doctor`.
	Diagnoser Diagnoser
	// BoxCleaner: its Cleanup ends with the shared CleanupWorkRoot step, so CleanupAll runs its
	// box step before every platform's work-root step; nil: Cleanup is run whole.
	BoxCleaner BoxCleaner
	// Settings: the platform has a section of its own in the spec (kubernetes:), which it
	// decodes, validates and is configured with itself; nil: none.
	Settings Settings
	// Host: the platform needs something of this host beyond its own lines (vm: /dev/kvm),
	// which `boxbench doctor` lists in its host area; nil: nothing.
	Host HostChecker
	// Images: its boxes boot images of their own, built from a database's root filesystem
	// (vm's guest disks) by `boxbench images build`; nil: the tree and the engine's image are
	// all it needs.
	Images ImageBuilder
	// Leftovers: the platform makes things outside boxbench's own places on the host (the
	// control groups, mounts and work directories platformtest.HostLeftovers looks at):
	// containers, services, a cluster's objects, LXC's lock directories; nil: it makes none.
	Leftovers LeftoverLister
	// Commands: checking a choice may run a program the user's own configuration names (a
	// kubeconfig's credential plugin); nil: the platform never runs one.
	Commands CommandRefuser
}

// CommandRefuser makes a platform refuse, from then on, every program its user's
// configuration names (saying so in Check's error); `plan` calls it, as it never runs one
// (builtin.ForPlan, docs/security.md).
type CommandRefuser interface{ NoCredentialCommands() }

// Settings is a platform's own top-level section of the spec, so that no other package knows
// its fields. The spec's vocabulary holds DecodeSection (builtin.Vocabulary): every parse
// calls it once, with the section's node or nil when the spec leaves the section out. Before
// an experiment's first Check or Provision, builtin.Configure calls the Configure of what
// DecodeSection returned for that experiment's spec.
type Settings interface {
	// SectionKey is the section's key at the spec's top level.
	SectionKey() string
	// DecodeSection decodes and validates the section (section.Decode and section.Checker
	// place each problem on its line and field), returning the decoded section (what spec
	// must know of it as data, and a Configure that configures this platform with the
	// platform's own typed value) and every problem. It changes nothing until Configure.
	DecodeSection(n *yaml.Node, c section.Context) (section.Decoded, []section.Problem)
}

// Offers says whether the platform offers storage s and network n.
func (i Info) Offers(s, n string) bool { return has(i.Storages, s) && has(i.Networks, n) }

// has says whether x is one of xs; an entry ending in ':' (e.g. "pvc:") stands for itself
// followed by a parameter (a DNS-1123 subdomain: "pvc:standard").
func has(xs []string, x string) bool {
	for _, v := range xs {
		if v == x && !strings.HasSuffix(v, ":") {
			return true
		}
		if strings.HasSuffix(v, ":") && strings.HasPrefix(x, v) && paramRe.MatchString(x[len(v):]) {
			return true
		}
	}
	return false
}

var paramRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$`)

// Choice is the part of a cell a platform must support.
type Choice struct {
	DBMS    dbms.DBMS // nil when only the storage, network and runtime are asked about
	Storage string
	Network string
	Runtime string
	// Cluster names one of the platform's orchestrator clusters (the cell's `cluster` key:
	// kubernetes.clusters); "" is the platform's default cluster. Validated by the platform's
	// section before any plan.
	Cluster string
}

// Request asks for one box.
type Request struct {
	Experiment string // experiment id: labels, cgroup and directory names (a validated identifier)
	Run        string // run id, unique within the experiment (a validated identifier)
	WorkDir    string // a host directory reserved for this box; teardown removes it
	DBMS       dbms.DBMS
	Choice
	// Resources are every limit, weight and I/O cap of the box. The platform applies all of
	// them in its own terms and reports in Box.Applied and Box.Warnings what took effect.
	Resources   resource.Limits
	StorageOpts StorageOptions
	// Seed is a cleanly stopped data directory to restore into the box's storage; nil
	// initialises an empty data directory.
	Seed *Snapshot
	Log  *slog.Logger
	// Node makes the box one node of a cluster (package cluster); nil for a single server.
	Node *Node
}

// Node places a box as one node of a cluster. Its peers reach it at the address package
// cluster decided before any node started (the database's configuration names them all):
//   - Network "" (the nodes share the host's network): the box listens on 127.0.0.1 at
//     Ports[dbms.PortClient] (and the database's other listeners at the other Ports, which its
//     configuration names), instead of a port of the platform's choosing;
//   - Network set (an engine network that ClusterNetwork made): the box joins that network
//     under the host name Name, at the database's default ports, instead of a network of its
//     own.
type Node struct {
	Name    string         // "n1", "n2", …: a DNS label
	Network string         // the cluster's network (ClusterNetwork), "" for the host's
	Ports   map[string]int // on the host's network: every listener's port, reserved by the caller
	// Index is the node's place in the cluster (0 for n1) and Count the cluster's number of
	// nodes: a platform that puts each node on a machine of its own (kubernetes on the pod
	// network) decides from them which machine, and whether one is left for the client.
	Index, Count int
}

// Clusterer is what a platform whose boxes can be the nodes of a cluster offers
// (Info.Cluster). A platform without one refuses topologies (spec validation and Check say so).
type Clusterer interface {
	// ClusterNetwork prepares what the nodes of one cluster on network c.Network share: an
	// engine network labelled with r's experiment and run (so Cleanup finds it after a crash)
	// for a bridge, nothing ("", a no-op release) when the nodes share the host's network.
	// release removes it after every node's box was torn down; it is idempotent.
	ClusterNetwork(ctx context.Context, r Request) (name string, release func(context.Context) error, err error)
	// ClusterRefuses are this platform's network values whose boxes cannot be the nodes of a
	// cluster, each with the reason (nil: every network can carry one). Spec validation and
	// cluster.Check refuse a topology on them with that reason.
	ClusterRefuses() map[string]string
	// NodeAddress is the address the peers name node i (0 for n1) by on network, the name
	// ClusterNetwork returned: "" where the network's name service resolves the node's name
	// (an engine's DNS, cluster DNS), an address where the network has none (native across
	// network namespaces). Only called for a network ClusterNetwork made.
	NodeAddress(ctx context.Context, network string, i int) (string, error)
}

// StorageOptions tune the storage backends that need it.
type StorageOptions struct {
	BlockdevFS     string // "ext4" (default) or "xfs"
	BlockdevSize   int64  // bytes of the loop file; 0 = default
	BlockdevDevice string // a device the user names instead of a loop file (checked, then reformatted)
	BlockdevWipe   bool   // the user agreed to lose a signature found on BlockdevDevice
	TmpfsSize      int64  // bytes; 0 = default
	// Protect are host paths whose devices must never be formatted (the work root, the results).
	Protect []string
	// BindWithin puts bind storage in this directory: another box's storage root, whose file
	// system (and journal) the box then shares (a neighbour's storage: shared).
	BindWithin string
}

// Host returns the options of host-side storage of kind (storage.Prepare).
func (o StorageOptions) Host(kind string) storage.Options {
	size := o.BlockdevSize
	if kind == storage.Tmpfs {
		size = o.TmpfsSize
	}
	within := ""
	if kind == storage.Bind {
		within = o.BindWithin
	}
	return storage.Options{FS: o.BlockdevFS, Size: size, Device: o.BlockdevDevice, Wipe: o.BlockdevWipe, Protect: o.Protect, Within: within}
}

// Box is one provisioned database server.
//
// Contract: a Box returned by Provision is running and ready. Endpoint, DataDir, Observe,
// Applied, Warnings and Facts are fixed after Provision and cheap. Teardown is idempotent and
// safe after any failure, from any goroutine, concurrently, and removes everything the box
// created. Other methods must not be called after Teardown.
type Box interface {
	// Endpoint is where the client (on the host) reaches the server.
	Endpoint() driver.Endpoint
	// DataDir is the data directory as the server sees it (Exec runs there).
	DataDir() string
	// Observe says how telemetry can see the box, and what it cannot see.
	Observe() Observation
	// Applied is what took effect of Request.Resources, read back from the source of truth.
	Applied() resource.Applied
	// Traits are what the box can do beyond these methods, fixed after Provision. A wrapper
	// that embeds a Box keeps them; one that changes a trait overrides Traits.
	Traits() Traits
	// Warnings are doubts about the box the run must carry: a control the platform could not
	// enforce, a server version that differs from the baseline's, an emulated machine.
	Warnings() []Warning
	// Facts describe the box for the stored environment: storage backing and mount options,
	// restore method, image, runtime, the exact server command.
	Facts() map[string]string
	// Exec runs argv inside the box (the server's cgroup, namespaces and mount view) as root, in
	// DataDir. A failure is a *command.Error with argv, the exit status and the output.
	Exec(ctx context.Context, argv []string) ([]byte, error)
	// LogTail returns up to n bytes of the end of the server's log.
	LogTail(n int) string
	// Stop shuts the server down cleanly; its data stays for Capture.
	Stop(ctx context.Context) error
	// Capture copies the stopped server's data directory into the host directory dst (which it
	// creates): from a host directory where the box's storage is visible, as a stream out of the
	// box otherwise.
	Capture(ctx context.Context, dst string) error
	// Teardown stops everything and removes what the box created.
	Teardown(ctx context.Context) error
}

// Platform is one operational model.
type Platform interface {
	Info() Info
	// Check says why this host cannot run c on this platform (nil when it can). It must not
	// start anything; trials that need a real box are run by Probe.
	Check(ctx context.Context, c Choice) error
	// Provision creates, starts and waits for a box. On error it has already removed whatever it
	// created, and the error carries the server's log tail when the server did start.
	Provision(ctx context.Context, r Request) (Box, error)
	// Cleanup removes leftovers of experiments for which crashed returns true: processes,
	// cgroups, containers, volumes, networks, mounts, loop devices, directories under workRoot.
	// It touches nothing of any other experiment and returns what it removed.
	Cleanup(ctx context.Context, workRoot string, crashed func(experiment string) bool) ([]string, error)
}

// BoxCleaner is offered (Info.BoxCleaner) by platforms whose Cleanup ends with
// CleanupWorkRoot: CleanupBoxes is everything before that step (their boxes' processes,
// containers, interfaces, and what they find from the work directories, such as socket
// directories or LXC markers). CleanupAll
// runs every platform's CleanupBoxes before the shared work-root step, so that no platform
// unmounts a filesystem another platform's orphaned server still uses, or removes the work
// directories another platform finds its leftovers from.
type BoxCleaner interface {
	CleanupBoxes(ctx context.Context, workRoot string, crashed func(experiment string) bool) ([]string, error)
}

// Prober is offered (Info.Prober) by platforms whose abilities need a real trial (e.g. a
// runtime that is registered but fails on this kernel).
type Prober interface {
	// Probe tries c for real, bounded in time, and returns the engine's own error.
	Probe(ctx context.Context, c Choice) error
}

// Traits are what a box can do beyond the Box methods, nil where it cannot.
type Traits struct {
	// Nodes are the boxes of a box that is several (a cluster of nodes, each an ordinary box of
	// its platform: a process, a container, a swarm service, a pod); nil for a single box.
	// Telemetry samples each node through its own Observe (a host cgroup or the
	// orchestrator's stats, platform.StatsView), and the run's validity checks look at every
	// node; the first node stands for the box where a box has one answer (Box.Observe,
	// Box.Applied). Every node is running, in order (the first first); callers must not tear
	// a node down (the box's own Teardown does).
	Nodes []NamedBox
	// Site is where the box's client runs when it must run somewhere other than boxbench's
	// own process (a container on the box's overlay network, a pod on a cluster node): the
	// runner then runs the cell's workload there through `boxbench agent` (package agent).
	// nil: the client runs in boxbench's process on this host.
	Site ClientSite
	// Emulated says the box's CPU is emulated in software (a VM under QEMU's TCG): its
	// numbers are the emulator's. The runner stores it with the run (results.RunRecord's
	// Emulated) and allows the box more time to answer; reports label it and withhold its
	// verdicts. The box's fact FactEmulated says the same in words, for people.
	Emulated bool
	// Orchestrator is what the box records of the orchestrator it runs on (a cluster's name,
	// network plugin, version, nodes), which the runner stores with the run
	// (results.RunRecord's Orchestrator) and the report shows per cell; nil on none.
	Orchestrator *Orchestrator
}

// Orchestrator is what a box records of the orchestrator it runs on, for people: the report
// prints the facts under Name in this order, each with its label, and knows nothing of them.
// Each fact is also one of the box's Facts (Key), where people and the docs find it.
type Orchestrator struct {
	Name  string // as people write it ("Kubernetes"): "what the runs recorded of their <Name> cluster"
	Facts []OrchestratorFact
}

// OrchestratorFact is one fact of an Orchestrator: Value "" where the box has none (the report
// leaves it out), so that every box of a platform lists the same facts in the same order.
type OrchestratorFact struct {
	Key   string // the fact's key in Box.Facts ("kubernetes_cni")
	Label string // its short label in the report ("CNI")
	Value string
}

// ClientSite is a place other than boxbench's own process where a box's client runs
// (Traits.Site).
type ClientSite interface {
	// ClientPlace says where the client runs (recorded with the run, e.g. "container on overlay
	// network bb-…" or "pod on node n1") and the server's endpoint as seen from there.
	ClientPlace() (where string, ep driver.Endpoint)
	// RunAgent runs `boxbench agent` at the site with stdin as its standard input and copies its
	// standard output to stdout. It returns when the agent exits; it honours ctx (ends the agent
	// and removes what it started); its error carries the agent's stderr tail. The site provides
	// boxbench's binary itself (a read-only bind mount of os.Executable() for a container on this
	// host; an image or a host path for a pod).
	RunAgent(ctx context.Context, stdin io.Reader, stdout io.Writer) error
	// ClientCPUs are the cpus of this host the client runs on (a container on an overlay
	// network given boxbench's own client cpus, a duet side's pinned agent), in cpuset list
	// form: placement.client then holds there too, and the run records them. "" when the site
	// is not on known cpus of this host (a pod on a cluster node).
	ClientCPUs() string
}

// Finding is one line of `boxbench doctor`.
type Finding struct {
	Area   string // "host", "tools", "dbms", or a platform name
	Name   string
	OK     bool
	Detail string // what was found (a version, the engine's own error)
	Fix    string // the command that fixes it, when there is one
	// Needs are set when what is missing are prerequisites that Fix makes (an image not built,
	// a package not installed), with the estimates of their time that doctor prints beside it.
	Needs []prereq.Need
}

// Lacks sets f's detail to err and its fix to fix, or, when every reason of err is a need
// (prereq.Split), to their commands, keeping the needs for their estimates.
func (f *Finding) Lacks(err error, fix string) {
	f.Detail, f.Fix = err.Error(), fix
	if needs, rest := prereq.Split(err); rest == nil && len(needs) > 0 {
		f.Needs = prereq.Merge(needs)
		cmds := make([]string, len(f.Needs))
		for i, n := range f.Needs {
			cmds[i] = n.Command
		}
		f.Fix = strings.Join(cmds, "; ")
	}
}

// HostChecker is offered (Info.Host) by platforms that need something of this host that is
// no platform's own (a device, a kernel feature): `boxbench doctor` lists the findings in its
// host area, before the tools. Platforms that share a need (vm and vm-docker) return the same
// finding (the same Area and Name), which doctor lists once, from the first platform by name.
type HostChecker interface {
	HostFindings() []Finding
}

// ImageBuilder is offered (Info.Images) by platforms whose boxes boot images of their own,
// made from a database's root filesystem tree. `boxbench images build` registers each
// ImageFlag once (platforms that share one, vm and vm-docker, return the same name and help)
// and, when the flag is given, calls BuildImages of every platform that offers it after the
// database's tree and engine image, all at once.
type ImageBuilder interface {
	// ImageFlag is the flag of `boxbench images build` that asks for these images, and its help.
	ImageFlag() (name, usage string)
	// BuildImages builds the images of tree's database (a no-op for one whose inputs are
	// unchanged), honouring ctx; it calls done once per image, with the line `images build`
	// prints of it after the database's name, whether it was built now, or the error.
	BuildImages(ctx context.Context, tree rootfs.Tree, done func(line string, built bool, err error))
}

// LeftoverLister is offered (Info.Leftovers) by platforms that can say what an experiment left
// in their own places: the check of the conformance suite (platformtest) and of the end-to-end
// tests that nothing outlives an experiment, whichever platforms it ran on.
type LeftoverLister interface {
	// Leftovers lists what of experiment exp, run under workRoot, the platform's own places
	// still hold, one line per thing, naming it; it starts and removes nothing. The error says
	// where it could not look (an engine or a cluster that does not answer), beside what it
	// found elsewhere.
	Leftovers(ctx context.Context, workRoot, exp string) ([]string, error)
}

// Diagnoser is offered (Info.Diagnoser) by platforms that can say what they can do on this host.
// dbs are the databases of this build in name order (the wiring's table: a platform holds no
// list of databases), for findings per database such as an image built or not.
type Diagnoser interface {
	Diagnose(ctx context.Context, dbs []dbms.DBMS) []Finding
}
