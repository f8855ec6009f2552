// Package hostnet makes the host-side network of a box that has a bridge of its own: a Linux
// bridge with a /24 of 10.213.0.0/16 that no host interface uses, and the names of the
// interfaces that join it (an LXC container's veth, a VM's tap). Boxes of concurrent runs never
// share an address plan, and teardown removes exactly what the box made. The client on the host
// reaches the box's address directly (no NAT, no proxy), like Docker's bridge-direct.
package hostnet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/flock"
)

const subnetBase = "10.213"

// Interface name prefixes: every host interface boxbench makes starts with "bb".
const (
	PrefixBridge = "bbx"
	PrefixVeth   = "bbv"
	PrefixTap    = "bbt"
)

// netMu serialises the choice of a free subnet and the bridge's creation within this process;
// lockFile across processes (two boxbench runs, or a test package's beside another's, would
// otherwise both see the same /24 free and give it to two bridges).
var (
	netMu    sync.Mutex
	lockFile = "/run/boxbench/hostnet.lock"
)

// Name derives a host interface name of a box: prefix plus 8 hex digits of its experiment and
// run, within the kernel's 15-byte limit. The same box gets the same names, so a crashed
// experiment's interfaces are found again from its marker.
func Name(prefix, exp, run string) string {
	h := sha256.Sum256([]byte(exp + "/" + run))
	return prefix + hex.EncodeToString(h[:4])
}

// Bridge is a bridge boxbench made for one box, and the box's static address on it.
type Bridge struct {
	Name    string // host interface (at most 15 bytes)
	Addr    string // the box's address with prefix, e.g. "10.213.7.2/24"
	Gateway string // the bridge's address, e.g. "10.213.7.1"
}

// BoxIP is the address part of Addr.
func (b *Bridge) BoxIP() string {
	ip, _, _ := strings.Cut(b.Addr, "/")
	return ip
}

// MakeBridge creates the box's bridge (named Name(PrefixBridge, exp, run)) with the first free
// /24 and returns it.
func MakeBridge(ctx context.Context, exp, run string) (*Bridge, error) {
	netMu.Lock()
	defer netMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(lockFile), 0o755); err != nil {
		return nil, fmt.Errorf("bridge lock: %w", err)
	}
	unlock, err := flock.Lock(ctx, lockFile, nil)
	if err != nil {
		return nil, fmt.Errorf("bridge lock: %w", err)
	}
	defer unlock()
	bridge := Name(PrefixBridge, exp, run)
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
			_ = RemoveLink(context.WithoutCancel(ctx), bridge)
			return nil, fmt.Errorf("configure bridge %s: %w", bridge, err)
		}
	}
	return &Bridge{Name: bridge, Addr: fmt.Sprintf("%s.%d.2/24", subnetBase, n), Gateway: gw}, nil
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

// linkRe is the shape of every host interface name boxbench makes (Name: "bb", a letter, 8 hex
// digits).
var linkRe = regexp.MustCompile(`^bb[a-z][0-9a-f]{8}$`)

// RemoveLink deletes a host interface boxbench made; one that is already gone is not an error.
// A name that is not of the shape Name makes is refused: no other interface is boxbench's.
func RemoveLink(ctx context.Context, name string) error {
	if !linkRe.MatchString(name) {
		return fmt.Errorf("not removing interface %q: not a name boxbench makes (valid: bb, a letter and 8 hexadecimal digits)", name)
	}
	if _, err := command.Run(ctx, "ip", "link", "show", name); err != nil {
		return nil
	}
	if _, err := command.Run(ctx, "ip", "link", "del", name); err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return nil
}
