package lxc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/boxbench/boxbench/command"
)

// Each bridge-networked box gets a bridge of its own with a /24 of 10.213.0.0/16 that no host
// interface uses: boxes of concurrent runs never share an address plan, and teardown removes
// exactly what the box made. The client on the host reaches the container's address directly
// (no NAT, no proxy), like Docker's bridge-direct.
const subnetBase = "10.213"

// netMu serialises the choice of a free subnet and the bridge's creation within this process.
var netMu sync.Mutex

// ifaceNames derives the host-side interface names of a box: "bbx" (bridge) and "bbv" (veth)
// plus 8 hex digits of its experiment and run, within the kernel's 15-byte limit.
func ifaceNames(exp, run string) (bridge, veth string) {
	h := sha256.Sum256([]byte(exp + "/" + run))
	s := hex.EncodeToString(h[:4])
	return "bbx" + s, "bbv" + s
}

// makeBridge creates the box's bridge with the first free /24 and returns the network.
func makeBridge(ctx context.Context, exp, run string) (*bridgeNet, error) {
	netMu.Lock()
	defer netMu.Unlock()
	bridge, veth := ifaceNames(exp, run)
	out, err := command.Run(ctx, "ip", "-o", "-4", "addr", "show")
	if err != nil {
		return nil, fmt.Errorf("list host addresses: %w", err)
	}
	used := usedSubnets(string(out))
	n := -1
	for i := 1; i < 255; i++ {
		if !used[i] {
			n = i
			break
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("no free /24 left in %s.0.0/16 for a bridge", subnetBase)
	}
	gw := fmt.Sprintf("%s.%d.1", subnetBase, n)
	if _, err := command.Run(ctx, "ip", "link", "add", bridge, "type", "bridge"); err != nil {
		return nil, fmt.Errorf("create bridge %s: %w", bridge, err)
	}
	for _, argv := range [][]string{{"ip", "addr", "add", gw + "/24", "dev", bridge}, {"ip", "link", "set", bridge, "up"}} {
		if _, err := command.Run(ctx, argv...); err != nil {
			_ = removeLink(context.WithoutCancel(ctx), bridge)
			return nil, fmt.Errorf("configure bridge %s: %w", bridge, err)
		}
	}
	return &bridgeNet{Bridge: bridge, Veth: veth, Addr: fmt.Sprintf("%s.%d.2/24", subnetBase, n), Gateway: gw}, nil
}

// usedSubnets reads `ip -o -4 addr show` and returns the third octets of 10.213.x.y in use.
func usedSubnets(out string) map[int]bool {
	used := map[int]bool{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "inet" {
				continue
			}
			p, err := netip.ParsePrefix(f[i+1])
			if err != nil {
				continue
			}
			a := p.Addr().As4()
			if a[0] == 10 && a[1] == 213 {
				used[int(a[2])] = true
			}
		}
	}
	return used
}

// removeLink deletes a host interface boxbench made; one that is already gone is not an error.
func removeLink(ctx context.Context, name string) error {
	if _, err := command.Run(ctx, "ip", "link", "show", name); err != nil {
		return nil
	}
	if _, err := command.Run(ctx, "ip", "link", "del", name); err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return nil
}

// containerIP is the address part of a bridgeNet's Addr.
func (n *bridgeNet) containerIP() string {
	ip, _, _ := strings.Cut(n.Addr, "/")
	return ip
}
