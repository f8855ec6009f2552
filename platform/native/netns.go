package native

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/platform/hostnet"
)

// Network netns: the server in a network namespace of its own, with its own address on a bridge
// boxbench makes (platform/hostnet), so that what it sends crosses a network stack, as between
// machines: the native baseline of a cluster across nodes (docs/topology.md). A cluster's nodes
// share one bridge (ClusterNetwork), node i at .(10+i) of its /24, and name each other by
// address (NodeAddress: there is no name service on it). A single box gets a bridge of its own.
// The client, on the host, reaches each node at its address through the bridge.
//
// Names derive from the experiment and run (hostnet.Name), so that doctor --cleanup finds a
// crashed run's namespace and bridge again from its work directory.
const NetworkNetns = "netns"

// prefixNetns starts the name of a box's network namespace (/run/netns/<name>).
const prefixNetns = "bbn"

// fwComment marks the FORWARD rule that lets a cluster bridge's ports reach each other: with
// br_netfilter on (the engines turn it on), bridged frames cross the host's FORWARD chain,
// whose policy dockerd sets to DROP.
const fwComment = "boxbench-native-netns"

func netnsName(exp, run string) string { return hostnet.Name(prefixNetns, exp, run) }
func netnsPath(name string) string     { return filepath.Join("/run/netns", name) }

// makeBridge makes the bridge of a cluster (or of one box) and lets its ports reach each other.
func makeBridge(ctx context.Context, exp, run string) (*hostnet.Bridge, error) {
	br, err := hostnet.MakeBridge(ctx, exp, run)
	if err != nil {
		return nil, err
	}
	if _, err := command.Run(ctx, "iptables", "-I", "FORWARD", "1", "-i", br.Name, "-o", br.Name,
		"-m", "comment", "--comment", fwComment, "-j", "ACCEPT"); err != nil {
		return nil, errors.Join(fmt.Errorf("let the ports of bridge %s reach each other: %w", br.Name, err),
			hostnet.RemoveLink(context.WithoutCancel(ctx), br.Name))
	}
	return br, nil
}

// removeBridge removes the bridge and its FORWARD rule; both already gone is not an error.
func removeBridge(ctx context.Context, name string) error {
	for {
		if _, err := command.Run(ctx, "iptables", "-C", "FORWARD", "-i", name, "-o", name,
			"-m", "comment", "--comment", fwComment, "-j", "ACCEPT"); err != nil {
			break
		}
		if _, err := command.Run(ctx, "iptables", "-D", "FORWARD", "-i", name, "-o", name,
			"-m", "comment", "--comment", fwComment, "-j", "ACCEPT"); err != nil {
			return err
		}
	}
	return hostnet.RemoveLink(ctx, name)
}

// bridgeGateway is the bridge's own address (x.y.z.1), from which its nodes' addresses follow.
func bridgeGateway(ctx context.Context, bridge string) (netip.Addr, error) {
	out, err := command.Run(ctx, "ip", "-o", "-4", "addr", "show", "dev", bridge)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("bridge %s: %w", bridge, err)
	}
	f := strings.Fields(string(out))
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "inet" {
			if p, err := netip.ParsePrefix(f[i+1]); err == nil && p.Addr().Is4() {
				return p.Addr(), nil
			}
		}
	}
	return netip.Addr{}, fmt.Errorf("bridge %s has no IPv4 address", bridge)
}

// nodeAddr is node i's address on a bridge whose own address is gw.
func nodeAddr(gw netip.Addr, i int) string {
	a := gw.As4()
	a[3] = byte(10 + i)
	return netip.AddrFrom4(a).String()
}

// NodeAddress: node i of a cluster on bridge network (platform.Clusterer).
func (*Platform) NodeAddress(ctx context.Context, network string, i int) (string, error) {
	gw, err := bridgeGateway(ctx, network)
	if err != nil {
		return "", err
	}
	return nodeAddr(gw, i), nil
}

// joinNetns makes the box's network namespace with its veth on bridge at addr (/24), its
// loopback up and a default route through the bridge.
func joinNetns(ctx context.Context, name, bridge, addr string, gw netip.Addr) error {
	veth := hostnet.Name(hostnet.PrefixVeth, name, "")
	steps := [][]string{
		{"ip", "netns", "add", name},
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", name},
		{"ip", "link", "set", veth, "master", bridge, "up"},
		{"ip", "-n", name, "link", "set", "lo", "up"},
		{"ip", "-n", name, "addr", "add", addr + "/24", "dev", "eth0"},
		{"ip", "-n", name, "link", "set", "eth0", "up"},
		{"ip", "-n", name, "route", "add", "default", "via", gw.String()},
	}
	for _, argv := range steps {
		if _, err := command.Run(ctx, argv...); err != nil {
			return fmt.Errorf("network namespace %s: %w", name, err)
		}
	}
	return nil
}

// removeNetns deletes a box's network namespace (its veth goes with it); gone is not an error.
func removeNetns(ctx context.Context, name string) error {
	if !pathExists(netnsPath(name)) {
		return nil
	}
	_, err := command.Run(ctx, "ip", "netns", "del", name)
	return err
}

func pathExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// inNetns prefixes argv so that it runs in the named network namespace.
func inNetns(name string, argv []string) []string {
	if name == "" {
		return argv
	}
	return append([]string{"nsenter", "--net=" + netnsPath(name), "--"}, argv...)
}

// nodeRun matches a cluster node's run ("r0001-n2"): its cluster's bridge is named after
// "r0001".
var nodeRun = regexp.MustCompile(`^(.+)-n[0-9]+$`)

// removeNetworks removes what network netns made for a crashed experiment's run: its namespace,
// its own bridge, and its cluster's bridge.
func removeNetworks(ctx context.Context, exp, run string) []string {
	var done []string
	if name := netnsName(exp, run); pathExists(netnsPath(name)) && removeNetns(ctx, name) == nil {
		done = append(done, "network namespace "+name)
	}
	runs := []string{run}
	if m := nodeRun.FindStringSubmatch(run); m != nil {
		runs = append(runs, m[1])
	}
	for _, r := range runs {
		br := hostnet.Name(hostnet.PrefixBridge, exp, r)
		if _, err := command.Run(ctx, "ip", "link", "show", br); err == nil && removeBridge(ctx, br) == nil {
			done = append(done, "bridge "+br)
		}
	}
	return done
}

// makeNetns puts the box in a network namespace of its own on its cluster's bridge (at the
// node's address) or on a bridge of its own, listening at that address; the client reaches it
// there from the host.
func (b *box) makeNetns(ctx context.Context) error {
	r := b.req
	bridge, index := "", 0
	if r.Node != nil && r.Node.Network != "" {
		bridge, index = r.Node.Network, r.Node.Index
	} else {
		br, err := makeBridge(ctx, r.Experiment, r.Run)
		if err != nil {
			return err
		}
		b.bridge, bridge = br.Name, br.Name
	}
	gw, err := bridgeGateway(ctx, bridge)
	if err != nil {
		return err
	}
	addr := nodeAddr(gw, index)
	b.netns = netnsName(r.Experiment, r.Run)
	if err := joinNetns(ctx, b.netns, bridge, addr, gw); err != nil {
		return err
	}
	b.layout.Listen = addr
	b.ep = driver.Endpoint{Host: addr, Port: b.layout.Port}
	b.facts["netns"] = b.netns
	b.facts["ran_on"] = "network namespace " + b.netns + " (" + addr + " on bridge " + bridge + ")"
	b.facts["network_path"] = "host to " + addr + " through bridge " + bridge + " and the namespace's veth"
	b.facts["endpoint"] = b.ep.String()
	return nil
}
