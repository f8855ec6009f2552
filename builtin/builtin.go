// Package builtin is the one place where boxbench's built-in platforms and workloads are
// listed. Nothing registers itself: adding an implementation means adding it here.
package builtin

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"sync"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/native"
)

// Platforms returns every platform of this build by name.
func Platforms(log *slog.Logger) map[string]platform.Platform {
	ps := map[string]platform.Platform{"native": native.New()}
	for name, p := range extraPlatforms(log) {
		ps[name] = p
	}
	return ps
}

// Checker says why the host cannot run a cell. With probe set it also tries runtimes for real
// (once each), which starts short-lived containers; without it nothing is started.
func Checker(ps map[string]platform.Platform, probe bool) plan.Checker {
	var mu sync.Mutex
	probed := map[string]error{}
	return func(ctx context.Context, c *plan.Cell) error {
		p := ps[c.Platform]
		if p == nil {
			return fmt.Errorf("platform %s is not available in this build", c.Platform)
		}
		d, err := dbms.Get(c.DBMS)
		if err != nil {
			return err
		}
		// Data sets are loaded natively and native is the baseline: the server must be installed.
		if bin := d.StartCommand(dbms.Layout{})[0]; !installed(bin) {
			return fmt.Errorf("%s is not installed on this host (%s missing): apt-get install %v", d.Name(), bin, d.Packages())
		}
		ch := platform.Choice{Storage: c.Storage, Network: c.Network, Runtime: c.Runtime}
		if err := p.Check(ctx, ch); err != nil {
			return err
		}
		pr, ok := p.(platform.Prober)
		if !probe || !ok || c.Runtime == "" {
			return nil
		}
		key := c.Platform + "/" + c.Runtime
		mu.Lock()
		defer mu.Unlock()
		if err, done := probed[key]; done {
			return err
		}
		err = pr.Probe(ctx, ch)
		probed[key] = err
		return err
	}
}

func installed(bin string) bool {
	_, err := exec.LookPath(bin)
	return err == nil
}
