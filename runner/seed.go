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
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/hostenv"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/workload"
	"golang.org/x/sys/unix"
)

// seedCache loads each distinct data set once and keeps the stopped data directory under
// WORKROOT/seeds/<key>; every run restores it into its own storage (a copy or reflink on this
// host, a tar stream into a box the host cannot see into). The key covers the database build and
// everything the load depends on, so seeds are shared across experiments.
//
// A seed is loaded by the first platform, of the preferred one (the experiment's baseline
// platform) and the cell's own, that can load seeds and run the database here: a host without
// the native server still gets its seeds from the cell's platform.
type seedCache struct {
	dir       string
	exp       string
	platforms map[string]platform.Platform
	preferred string
	log       *slog.Logger
	failed    map[string]error // a load that failed once fails the same way: do not repeat it
	mu        sync.Mutex       // one Get at a time (the two runs of a duet ask together)
}

func newSeedCache(dir, exp string, platforms map[string]platform.Platform, preferred string, log *slog.Logger) *seedCache {
	return &seedCache{dir: dir, exp: exp, platforms: platforms, preferred: preferred, log: log, failed: map[string]error{}}
}

// SeedInfo tells a run where its data came from.
type SeedInfo struct {
	Dir      string
	Key      string
	Platform string        // the platform that loaded it (when Loaded) or will load it
	Loaded   bool          // true when this call did the load
	Took     time.Duration // load time when Loaded
}

// Snapshot is the seed as a request's data, nil when the workload needs none.
func (i SeedInfo) Snapshot() *platform.Snapshot {
	if i.Key == "" {
		return nil
	}
	return &platform.Snapshot{Key: i.Key, Dir: i.Dir}
}

// loader picks the platform that loads seeds of d for a cell on cellPlatform.
func (s *seedCache) loader(ctx context.Context, d dbms.DBMS, cellPlatform string) (string, platform.Platform, platform.Choice, error) {
	var why []error
	for _, name := range []string{s.preferred, cellPlatform} {
		p := s.platforms[name]
		if p == nil {
			continue
		}
		load := p.Info().Load
		if load == nil {
			why = append(why, fmt.Errorf("%s cannot load data sets", name))
			continue
		}
		ch := *load
		ch.DBMS = d
		if err := p.Check(ctx, ch); err != nil {
			why = append(why, fmt.Errorf("%s: %w", name, err))
			continue
		}
		return name, p, ch, nil
	}
	return "", nil, platform.Choice{}, fmt.Errorf("no platform can load the data set here: %w", errors.Join(why...))
}

// Get returns the seed directory for wl on d, loading it first when absent. A workload with
// an empty LoadKey needs no data: the result is empty.
func (s *seedCache) Get(ctx context.Context, d dbms.DBMS, wl workload.Workload, cellPlatform string) (SeedInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	if s.trusted(info) { // renamed into place and marked only when complete
		info.Platform = loadedBy(info)
		return info, nil
	}
	name, p, ch, err := s.loader(ctx, d, cellPlatform)
	if err != nil {
		return info, err
	}
	info.Platform = name
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
	if s.trusted(info) {
		info.Platform = loadedBy(info)
		return info, nil
	}
	start := time.Now()
	err = s.load(ctx, p, ch, d, wl, info)
	if err != nil {
		if ctx.Err() == nil {
			s.failed[key] = err
		}
		return info, err
	}
	info.Loaded, info.Took = true, time.Since(start)
	s.log.Info("data set loaded", "seed", key, "platform", name, "took", info.Took.Round(time.Millisecond))
	return info, nil
}

func (s *seedCache) load(ctx context.Context, p platform.Platform, ch platform.Choice, d dbms.DBMS, wl workload.Workload, info SeedInfo) (err error) {
	tmp := info.Dir + ".tmp"
	_ = os.RemoveAll(tmp)
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp) // a capture cut short (a full disk) leaves no partial seed
		}
	}()
	_ = os.Remove(markerOf(info))
	_ = os.RemoveAll(info.Dir)
	// The work directory is named by the box's run, as every box's is: cleanup finds a crashed
	// box's marker only in WORKROOT/<experiment>/<run> of the run the marker names.
	run := "seed-" + info.Key[len(info.Key)-8:]
	work := filepath.Join(filepath.Dir(s.dir), s.exp, run)
	box, err := p.Provision(ctx, platform.Request{Experiment: s.exp, Run: run,
		WorkDir: work, DBMS: d, Choice: ch, Log: s.log})
	if err != nil {
		return fmt.Errorf("start %s to load data: %w", d.Name(), err)
	}
	defer func() {
		tctx, cancel := platform.TeardownContext(ctx)
		defer cancel()
		err = errors.Join(err, box.Teardown(tctx))
	}()
	cred := d.Client()
	t := workload.Target{DBMS: d.Name(), Endpoint: box.Endpoint(), User: cred.User, Password: cred.Password, Database: cred.Database,
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
	if err := os.Rename(tmp, info.Dir); err != nil {
		return err
	}
	return writeMarker(info)
}

// A seed is used only when its completion marker, written by the load after the rename into
// place, names its key: a directory that boxbench did not make (or did not finish) under
// seeds/ is loaded again, never restored into a box. The marker's second line names the
// platform that loaded it (kept beside the seed, not in it: the seed is copied into boxes).
func markerOf(info SeedInfo) string { return info.Dir + ".complete" }

func markerLine(info SeedInfo) string { return "boxbench seed " + info.Key + "\n" }

func writeMarker(info SeedInfo) error {
	tmp := markerOf(info) + ".tmp"
	if err := os.WriteFile(tmp, []byte(markerLine(info)+"loaded-by "+info.Platform+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, markerOf(info))
}

// trusted reports whether the seed at info.Dir is a complete boxbench-made seed: a real
// directory (not a link) not writable by others, beside a regular marker naming its key owned
// by root (or by the user boxbench runs as: trustedOwner). An untrusted one is logged (and replaced by the load).
func (s *seedCache) trusted(info SeedInfo) bool {
	fi, err := os.Lstat(info.Dir)
	if os.IsNotExist(err) {
		return false
	}
	why := func() string {
		if err != nil {
			return err.Error()
		}
		if !fi.IsDir() {
			return "not a directory"
		}
		// The directory is the captured data directory, owned by the database's system user
		// (cp -a keeps it; the server needs it so): its owner says nothing about who made it. What
		// does is the root-owned marker beside it, in a seeds/ directory only root can write.
		if fi.Mode().Perm()&0o022 != 0 {
			return "writable by group or others"
		}
		mi, err := os.Lstat(markerOf(info))
		if err != nil {
			return "no completion marker (an interrupted load, or not made by boxbench)"
		}
		if st, ok := mi.Sys().(*syscall.Stat_t); !mi.Mode().IsRegular() || !ok || !trustedOwner(st.Uid) {
			return "its completion marker is not a root-owned regular file"
		}
		if b, err := os.ReadFile(markerOf(info)); err != nil || !strings.HasPrefix(string(b), markerLine(info)) {
			return "its completion marker names another seed"
		}
		return ""
	}()
	if why != "" {
		s.log.Warn("seed not trusted; loading it again", "seed", info.Dir, "reason", why)
		return false
	}
	return true
}

// loadedBy reads which platform loaded a trusted seed from its marker ("" when unsaid).
func loadedBy(info SeedInfo) string {
	b, _ := os.ReadFile(markerOf(info))
	_, rest, _ := strings.Cut(strings.TrimPrefix(string(b), markerLine(info)), "loaded-by ")
	return strings.TrimSpace(rest)
}
