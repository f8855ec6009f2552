package swarm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/flock"
	"github.com/boxbench/boxbench/internal/safefile"
	"github.com/boxbench/boxbench/platform"
)

// The swarm a box needs is the engine's: one per engine, shared by every process that uses the
// engine. boxbench initialises a single-node swarm when none is active and leaves it when its
// last box is gone, but only a swarm it created itself: the marker file names the cluster it
// created (written right after the init), and a swarm whose cluster id differs from the
// marker's, or without a marker, is never left — also not by Cleanup. The marker is the
// engine's (one file per engine ID): a run on another engine of the same host — a second
// dockerd, the e2e tests' own — must neither take the marker for its engine's nor forget it
// because its engine is in no swarm (it did: the swarm e2e's TestSwarm made was then kept, no
// marker naming it, while a test's own dockerd's runs cleaned up; cold CI, 2026-11-28).
//
// One lock file serialises, across processes and goroutines, the steps that make the swarm's
// use change: init plus the creation of a box's service (so that no release leaves the swarm
// between a box's init and its service), and release (the check for services plus the leave).

// StateDir holds the marker and the lock. The swarm outlives reboots (the engine keeps it under
// its data root), so the marker is on disk, not in /run.
var StateDir = "/var/lib/boxbench"

const (
	// legacyMarkerFile is the one marker of a host before markers were the engines':
	// readMarker adopts it for the engine whose active swarm it names.
	legacyMarkerFile = "swarm-created.json"
	lockFile         = "swarm.lock"
	// gwBridge is the bridge the engine makes for the outside connectivity of containers on
	// overlay networks; it stays after the swarm is left.
	gwBridge = "docker_gwbridge"
)

// marker records a swarm boxbench created.
type marker struct {
	ClusterID string    `json:"cluster_id"`
	NodeID    string    `json:"node_id"`
	Listen    string    `json:"listen_addr"`
	Created   time.Time `json:"created"`
	// GwBridge says boxbench's init made the engine create docker_gwbridge (it did not exist
	// before), so the release removes it.
	GwBridge bool `json:"gwbridge_created"`
}

// markerPath is the marker of the engine whose ID (docker info's) is engine; an ID's
// characters other than letters and digits become '-' in the file name.
func markerPath(engine string) string {
	name := strings.Map(func(c rune) rune {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			return c
		}
		return '-'
	}, engine)
	if name == "" || len(name) > 128 {
		name = "unknown-engine"
	}
	return filepath.Join(StateDir, "swarm-created-"+name+".json")
}

// readMarker is the marker of engine: its own file, or the host's legacy one when that names
// active, the swarm the engine is in now (cluster ids are random: no other engine's swarm has
// it), which it then becomes.
func readMarker(engine, active string) (*marker, error) {
	m, err := decodeMarker(markerPath(engine))
	if err == nil || !errors.Is(err, fs.ErrNotExist) || active == "" {
		return m, err
	}
	legacy := filepath.Join(StateDir, legacyMarkerFile)
	if m, lerr := decodeMarker(legacy); lerr == nil && m.ClusterID == active {
		if err := writeMarker(engine, *m); err != nil {
			return nil, err
		}
		return m, os.Remove(legacy)
	}
	return nil, err
}

// markerMax caps a swarm marker's size: boxbench's are a few hundred bytes.
const markerMax = 64 << 10

// swarmIDRe is the shape of the swarm IDs a marker may hold (the engine's are 25 letters and
// digits): it never reaches a path or an argv, but is logged and compared.
var swarmIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// decodeMarker reads the marker at path as strictly as a spec: boxbench leaves the swarm it
// names and removes the gateway bridge it says boxbench's init made. It must be a regular file
// (not a link, a FIFO or a device) of at most 64 KiB, owned by root or the user boxbench runs
// as and not writable by group or others, in directories only they can change (StateDir is
// root's), with no unknown field, swarm IDs of the engine's shape and, when set, the loopback
// listen address boxbench's init uses.
func decodeMarker(path string) (*marker, error) {
	b, err := safefile.Read(path, safefile.Rule{Max: markerMax, NoFollow: true, Owners: []uint32{0, uint32(os.Geteuid())}})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("swarm marker refused: %w", err)
	}
	var m marker
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("swarm marker %s is not boxbench's: %v", path, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("swarm marker %s is not boxbench's: %w", path, err)
	}
	return &m, nil
}

// check names every field of m that boxbench's init could not have written.
func (m marker) check() error {
	var problems []error
	if !swarmIDRe.MatchString(m.ClusterID) {
		problems = append(problems, fmt.Errorf("cluster_id %q is not a swarm ID (valid: letters, digits, '.', '_', '-', at most 128)", m.ClusterID))
	}
	if m.NodeID != "" && !swarmIDRe.MatchString(m.NodeID) {
		problems = append(problems, fmt.Errorf("node_id %q is not a swarm ID (valid: letters, digits, '.', '_', '-', at most 128)", m.NodeID))
	}
	if m.Listen != "" {
		host, port, err := net.SplitHostPort(m.Listen)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || host != "127.0.0.1" || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			problems = append(problems, fmt.Errorf("listen_addr %q is not the loopback address boxbench's init listens on (valid: 127.0.0.1:PORT)", m.Listen))
		}
	}
	return errors.Join(problems...)
}

func writeMarker(engine string, m marker) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := markerPath(engine) + ".tmp"
	_ = os.Remove(tmp) // a crash's leftover; never written through (O_EXCL, no link followed)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, markerPath(engine))
}

// lockWait bounds a wait for the swarm lock whatever the caller's context: an interrupted
// run's exit cleans up with a context that is never cancelled, and a holder that hangs (an
// engine that stopped answering in the middle of an init) must not hang every other boxbench
// process. A variable so that a test can shorten it.
var lockWait = 2 * time.Minute

// lock takes the swarm lock, waiting at most lockWait. On timeout the error names the holder
// (pid and command line, from the kernel's lock table) and says that what the caller was about
// to change is left for `boxbench doctor --cleanup`.
func lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(StateDir, lockFile)
	wctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	unlock, err := flock.Lock(wctx, path, nil)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		holder := "a process this one cannot name (see /proc/locks)"
		if h := flock.Holders(path); len(h) > 0 {
			holder = strings.Join(h, ", ")
		}
		return nil, fmt.Errorf("the swarm lock %s is held by %s: gave up after %s; the swarm's state is left as it is for `boxbench doctor --cleanup` once that process is gone", path, holder, lockWait)
	}
	return unlock, err
}

// state is the swarm as a box uses it.
type state struct {
	NodeID    string
	ClusterID string
	Created   bool // boxbench created it (now or earlier, per the marker)
}

// ensure makes sure a swarm is active, initialising a single-node one on the loopback address
// when none is. The caller holds the lock.
func (p *Platform) ensure(ctx context.Context) (state, error) {
	info, err := p.engine.Info(ctx)
	if err != nil {
		return state{}, fmt.Errorf("container engine: %w", err)
	}
	sw := info.Swarm
	switch sw.LocalNodeState {
	case swarm.LocalNodeStateActive:
		if !sw.ControlAvailable {
			return state{}, fmt.Errorf("this engine is a swarm worker, not a manager (node %s): services cannot be created here", sw.NodeID)
		}
		if p.multi {
			return state{NodeID: sw.NodeID, ClusterID: clusterID(sw)}, nil
		}
		id, err := p.activeClusterID(ctx, sw)
		if err != nil {
			return state{}, err
		}
		m, _ := readMarker(info.ID, id)
		return state{NodeID: sw.NodeID, ClusterID: id, Created: m != nil && m.ClusterID == id}, nil
	case swarm.LocalNodeStateInactive:
		if p.multi {
			return state{}, fmt.Errorf("the engine %s names (%s) is in no swarm: boxbench initialises only a single-node swarm on the docker platform's engine", EnvHost, p.engine.DaemonHost())
		}
	default:
		return state{}, fmt.Errorf("the engine's swarm is %s (%s): boxbench neither joins nor repairs a swarm", sw.LocalNodeState, sw.Error)
	}
	if err := p.guardBridges(ctx); err != nil {
		return state{}, err
	}
	_, gwErr := p.engine.NetworkInspect(ctx, gwBridge, network.InspectOptions{})
	port, err := platform.FreePort()
	if err != nil {
		return state{}, err
	}
	listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// Loopback only: the swarm's control and data ports are not exposed to any network.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if _, err := p.engine.SwarmInit(cctx, swarm.InitRequest{ListenAddr: listen, AdvertiseAddr: "127.0.0.1",
		DataPathAddr: "127.0.0.1"}); err != nil {
		return state{}, fmt.Errorf("initialise a single-node swarm on %s: %w", listen, err)
	}
	info, err = p.engine.Info(cctx)
	if err != nil {
		return state{}, fmt.Errorf("container engine after swarm init: %w", err)
	}
	id, err := p.activeClusterID(cctx, info.Swarm)
	if err != nil {
		_ = p.engine.SwarmLeave(cctx, true)
		return state{}, fmt.Errorf("after swarm init: %w", err)
	}
	m := marker{ClusterID: id, NodeID: info.Swarm.NodeID, Listen: listen, Created: time.Now().UTC(),
		GwBridge: cerrdefs.IsNotFound(gwErr)}
	if err := writeMarker(info.ID, m); err != nil {
		// Without the marker the swarm would never be left: leave it now.
		_ = p.engine.SwarmLeave(cctx, true)
		return state{}, fmt.Errorf("record the swarm boxbench created: %w", err)
	}
	p.log.Info("initialised a single-node swarm", "listen", listen, "cluster", m.ClusterID)
	return state{NodeID: m.NodeID, ClusterID: m.ClusterID, Created: true}, nil
}

func clusterID(sw swarm.Info) string {
	if sw.Cluster == nil {
		return ""
	}
	return sw.Cluster.ID
}

// activeClusterID is the ID of the swarm sw says is active. The engine's info leaves the
// cluster out when its manager does not answer in time (a loaded engine, its raft busy removing
// services): then the swarm's own inspection is asked, for up to a minute. An unknown ID is an
// error, never "another swarm": taken for one, the swarm boxbench created would be forgotten
// without being left (seen in e2e, 2026-11-27: after doctor --cleanup, an active swarm, nothing
// on it, and no marker).
func (p *Platform) activeClusterID(ctx context.Context, sw swarm.Info) (string, error) {
	if id := clusterID(sw); id != "" {
		return id, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		s, err := p.engine.SwarmInspect(ctx)
		if err == nil && s.ID != "" {
			return s.ID, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the engine's swarm is active but its cluster ID is unknown (node %s): %v", sw.NodeID, err)
		case <-time.After(time.Second):
		}
	}
}

// release leaves the swarm when boxbench created it and no service is left on it (of any
// experiment, boxbench's or not), and removes the gateway bridge the init made. A swarm
// boxbench did not create is never left. It says what it removed. With settle, the caller has
// just removed a cluster network, which the engine may list a moment longer: release waits
// that out (networkSettle) before keeping the swarm for it. Without, it looks once: it holds the
// swarm lock meanwhile, and every run's cleanup of its own leftovers calls it (a native run's
// too), so a wait there for another experiment's cluster network kept a Swarm test's node from
// the lock past its 2 minutes (e2e, cold CI run of 2026-11-27).
func (p *Platform) release(ctx context.Context, settle bool) ([]string, error) {
	if p.multi {
		return nil, nil // EnvHost's swarm: never boxbench's to leave; the marker is the other engine's
	}
	unlock, err := lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if ms, _ := filepath.Glob(filepath.Join(StateDir, "swarm-created*.json")); len(ms) == 0 {
		return nil, nil // no marker of any engine's: nothing of boxbench's to leave, no engine to ask
	}
	info, err := p.engine.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("container engine: %w", err)
	}
	sw := info.Swarm
	m, err := readMarker(info.ID, clusterID(sw))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			// Refused (decodeMarker): never acted on, and said — not an error of the caller's
			// run, which only tidies up after itself.
			p.log.Warn("not acting on the swarm marker", "err", err)
		}
		return nil, nil // no marker of this engine's: not ours
	}
	id := ""
	if sw.LocalNodeState == swarm.LocalNodeStateActive {
		if id, err = p.activeClusterID(ctx, sw); err != nil {
			return nil, fmt.Errorf("%w; the swarm and boxbench's marker %s are left as they are", err, markerPath(info.ID))
		}
	}
	if sw.LocalNodeState != swarm.LocalNodeStateActive || id != m.ClusterID {
		// The swarm boxbench made is gone (left by hand, or replaced by someone else's): the
		// marker names nothing any more. The gateway bridge its init made stays behind a
		// leave, unless a swarm is active again (whose bridge it now is).
		p.log.Info("the swarm boxbench created is gone: forgetting its marker", "cluster", m.ClusterID,
			"state", sw.LocalNodeState, "active cluster", id)
		return p.forget(ctx, info.ID, nil, m.GwBridge && sw.LocalNodeState == swarm.LocalNodeStateInactive)
	}
	svcs, err := p.engine.ServiceList(ctx, swarm.ServiceListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	if len(svcs) > 0 || sw.Nodes > 1 {
		p.log.Info("keeping the swarm boxbench created: still in use", "cluster", m.ClusterID, "services", len(svcs), "nodes", sw.Nodes)
		return nil, nil
	}
	// A cluster's network outlives its nodes' services for a moment at both ends of its life,
	// and a removed overlay network stays listed on this node a moment after its removal (a
	// crashed cluster's, removed by Cleanup): a caller that removed one (settle) waits that
	// moment out before keeping the swarm.
	count := p.clusterNetworks
	if settle {
		count = p.clusterNetworksSettled
	}
	if n, err := count(ctx); err != nil || n > 0 {
		if err == nil {
			p.log.Info("keeping the swarm boxbench created: a cluster's network is on it", "cluster", m.ClusterID, "networks", n)
		}
		return nil, err
	}
	if !p.acceptsDNSLoss() {
		cs, err := p.bridgeContainers(ctx)
		if err != nil {
			return nil, err
		}
		if len(cs) > 0 {
			p.log.Warn("keeping the swarm boxbench created: leaving it would break name resolution on bridge networks (moby/moby#45144); `boxbench doctor --cleanup` leaves it once these are gone",
				"cluster", m.ClusterID, "containers", strings.Join(cs, ", "))
			return nil, nil
		}
	}
	if err := p.engine.SwarmLeave(ctx, true); err != nil {
		return nil, fmt.Errorf("leave the swarm boxbench created (cluster %s): %w", m.ClusterID, err)
	}
	p.log.Info("left the swarm boxbench created", "cluster", m.ClusterID)
	return p.forget(ctx, info.ID, []string{"swarm " + m.ClusterID + " (created by boxbench, left)"}, m.GwBridge)
}

// forget removes engine's marker and, with bridge, the gateway bridge the swarm's init made, adding
// what it removed to done.
func (p *Platform) forget(ctx context.Context, engine string, done []string, bridge bool) ([]string, error) {
	var errs []error
	if bridge {
		if err := p.removeGwBridge(ctx); err != nil {
			errs = append(errs, err)
		} else {
			done = append(done, "network "+gwBridge+" (created with boxbench's swarm)")
		}
	}
	return done, errors.Join(append(errs, os.Remove(markerPath(engine)))...)
}

// removeGwBridge removes docker_gwbridge once no container is attached to it (the task
// containers of the swarm just left go away a moment after the leave).
func (p *Platform) removeGwBridge(ctx context.Context) error {
	for {
		n, err := p.engine.NetworkInspect(ctx, gwBridge, network.InspectOptions{})
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		if err == nil && len(n.Containers) == 0 {
			err = p.engine.NetworkRemove(ctx, gwBridge)
			if err == nil || cerrdefs.IsNotFound(err) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("remove %s (created with boxbench's swarm): %v: %w", gwBridge, err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
