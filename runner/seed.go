package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/hostenv"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/workload"
	"golang.org/x/sys/unix"
)

// seedCache loads each distinct data set once, natively, and keeps the stopped data directory
// under WORKROOT/seeds/<key>; every run restores it into its own storage. The key covers the
// database build and everything the load depends on, so seeds are shared across experiments.
type seedCache struct {
	dir    string
	exp    string
	native platform.Platform
	log    *slog.Logger
	failed map[string]error // a load that failed once fails the same way: do not repeat it
}

func newSeedCache(dir, exp string, native platform.Platform, log *slog.Logger) *seedCache {
	return &seedCache{dir: dir, exp: exp, native: native, log: log, failed: map[string]error{}}
}

// SeedInfo tells a run where its data came from.
type SeedInfo struct {
	Dir    string
	Key    string
	Loaded bool          // true when this call did the load
	Took   time.Duration // load time when Loaded
}

// Get returns the seed directory for wl on d, loading it first when absent. A workload with
// an empty LoadKey needs no data: the result is empty.
func (s *seedCache) Get(ctx context.Context, d dbms.DBMS, wl workload.Workload) (SeedInfo, error) {
	if wl.LoadKey() == "" {
		return SeedInfo{}, nil
	}
	pkg, _ := hostenv.PackageVersion(ctx, d.ServerPackage())
	h := sha256.Sum256([]byte(d.Name() + "\x00" + pkg + "\x00" + wl.LoadKey()))
	key := d.Name() + "-" + hex.EncodeToString(h[:])[:16]
	info := SeedInfo{Dir: filepath.Join(s.dir, key), Key: key}
	if err := s.failed[key]; err != nil {
		return info, err
	}
	if _, err := os.Stat(info.Dir); err == nil { // renamed into place only when complete
		return info, nil
	}
	if s.native == nil {
		return info, errors.New("loading data needs the native platform")
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return info, err
	}
	// Another boxbench may be loading the same seed: wait for it rather than load twice.
	lock, err := os.OpenFile(info.Dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return info, err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return info, err
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if _, err := os.Stat(info.Dir); err == nil {
		return info, nil
	}
	start := time.Now()
	err = s.load(ctx, d, wl, info)
	if err != nil {
		if ctx.Err() == nil {
			s.failed[key] = err
		}
		return info, err
	}
	info.Loaded, info.Took = true, time.Since(start)
	s.log.Info("data set loaded", "seed", key, "took", info.Took.Round(time.Millisecond))
	return info, nil
}

func (s *seedCache) load(ctx context.Context, d dbms.DBMS, wl workload.Workload, info SeedInfo) (err error) {
	tmp := info.Dir + ".tmp"
	_ = os.RemoveAll(tmp)
	_ = os.RemoveAll(info.Dir)
	work := filepath.Join(filepath.Dir(s.dir), s.exp, "seed-"+info.Key)
	box, err := s.native.Provision(ctx, platform.Request{Experiment: s.exp, Run: "seed-" + info.Key[len(info.Key)-8:],
		WorkDir: work, DBMS: d, Choice: platform.Choice{Storage: "bind", Network: "host"}, Log: s.log})
	if err != nil {
		return fmt.Errorf("start %s to load data: %w", d.Name(), err)
	}
	defer func() { err = errors.Join(err, box.Teardown(context.WithoutCancel(ctx))) }()
	cred := d.Client()
	t := workload.Target{DBMS: d.Name(), Endpoint: box.Endpoint(), User: cred.User, Database: cred.Database,
		Box: box, DataDir: box.DataDir(), Log: s.log}
	if err := wl.Load(ctx, t); err != nil {
		return fmt.Errorf("load data into %s: %w\nserver log (tail):\n%s", d.Name(), err, box.LogTail(2048))
	}
	if err := box.Stop(ctx); err != nil {
		return fmt.Errorf("stop %s after loading: %w", d.Name(), err)
	}
	if err := box.Capture(ctx, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, info.Dir)
}
