package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/hostenv"
	"github.com/boxbench/boxbench/platform"
)

func (r *Runner) storageOpts() platform.StorageOptions {
	s := r.cfg.Spec.StorageOptions
	return platform.StorageOptions{BlockdevFS: s.Blockdev.FS, BlockdevSize: int64(s.Blockdev.Size),
		BlockdevDevice: s.Blockdev.Device, BlockdevWipe: s.Blockdev.Wipe, TmpfsSize: int64(s.Tmpfs.Size),
		Protect: []string{r.cfg.WorkRoot, r.cfg.OutDir}}
}

// runDirName names a run's work directory and cgroup by its sequence number: short, unique
// within the experiment, and free of the characters cell ids contain.
func runDirName(seq int) string { return fmt.Sprintf("r%04d", seq) }

var dbmsEnv sync.Map // dbms name → map[string]string

// envOfDBMS records the native database build once per process.
func envOfDBMS(ctx context.Context, d dbms.DBMS) map[string]string {
	if v, ok := dbmsEnv.Load(d.Name()); ok {
		return v.(map[string]string)
	}
	env := hostenv.DBMS(ctx, d.VersionCommand(), d.ServerPackage())
	dbmsEnv.Store(d.Name(), env)
	return env
}
