package telemetry

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs/blockdevice"

	"github.com/boxbench/boxbench/internal/blockdev"
	"github.com/boxbench/boxbench/internal/cgroup"
)

// Guest is a box's own view from inside (a VM guest's /proc and its server's cgroup v2 group),
// read through the platform's channel. Each read is written into a private mirror directory, and
// the host's own collectors (procfs, the cgroup v2 parsers) read the mirror: the guest's values
// are parsed exactly as the host's are.
//
// A read through the channel can take seconds when the guest is saturated (an emulated guest
// under load answers late), so reads run in a goroutine of their own, one after the other, and a
// tick uses the newest complete read: the other targets' ticks are never held up. A guest value
// is stamped when the tick uses it; guest_read_seconds (the read's duration) and
// guest_read_age_seconds (how old the read is at the tick) say how far that may be from the
// moment the guest produced it.
//
// One Guest serves two targets — Target.Guest (the server's group in the guest, like a box's
// cgroup on the host) and Target.GuestSystem (the whole guest: CPU by mode, memory, load,
// pressure, its virtio disks). Close stops reading and removes the mirror.
type Guest struct {
	sample func(ctx context.Context) ([]byte, error)
	group  string // the server's group in the guest, e.g. /sys/fs/cgroup/boxbench/server
	mirror string

	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex // guards the mirror's files and the fields below
	readAt   time.Time  // when the newest complete read finished
	readTook time.Duration
	err      error // of the newest read attempt
}

// errNoNewRead is a guest collector's "no read completed since the previous tick": not a
// failure, no sample.
var errNoNewRead = errors.New("no new guest read")

// guestReadTimeout bounds one read through the channel.
const guestReadTimeout = 20 * time.Second

// guestReadPause is the pause between reads: the reads themselves cost the guest CPU.
const guestReadPause = 500 * time.Millisecond

// NewGuest prepares the mirror for a guest whose files sample returns ("==> PATH <==" sections)
// and whose server runs in the cgroup v2 directory group.
func NewGuest(sample func(ctx context.Context) ([]byte, error), group string) (*Guest, error) {
	if !filepath.IsAbs(group) || strings.Contains(group, "..") {
		return nil, fmt.Errorf("guest group %q is not an absolute, clean path", group)
	}
	dir, err := os.MkdirTemp("", "boxbench-guest-")
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"proc/pressure", "sys", strings.TrimPrefix(group, "/")} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return &Guest{sample: sample, group: filepath.Clean(group), mirror: dir, done: make(chan struct{})}, nil
}

// Close stops reading and removes the mirror.
func (g *Guest) Close() error {
	g.once.Do(func() { close(g.done) }) // never started: nothing to wait for
	if g.cancel != nil {
		g.cancel()
		<-g.done
	}
	return os.RemoveAll(g.mirror)
}

// start reads once, synchronously (so the sampler's baseline has the guest's values), then
// keeps reading in the background.
func (g *Guest) start() {
	g.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		g.cancel = cancel
		g.read(ctx)
		go func() {
			defer close(g.done)
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(guestReadPause):
				}
				g.read(ctx)
			}
		}()
	})
}

func (g *Guest) read(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, guestReadTimeout)
	defer cancel()
	start := time.Now()
	out, err := g.sample(rctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		err = g.write(out)
	}
	g.err = err
	if err == nil {
		g.readAt, g.readTook = time.Now(), time.Since(start)
	}
}

// write stores each "==> PATH <==" section under the mirror. Only /proc files and the group's
// files are accepted: the guest cannot make the host write anywhere else.
func (g *Guest) write(out []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	var path string
	var body bytes.Buffer
	flush := func() error {
		if path == "" {
			return nil
		}
		clean := filepath.Clean(path)
		if clean != path || !(strings.HasPrefix(clean, "/proc/") || filepath.Dir(clean) == g.group) {
			return fmt.Errorf("guest sample names %q, which is not one of its files", path)
		}
		return os.WriteFile(filepath.Join(g.mirror, clean), body.Bytes(), 0o644)
	}
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "==> "); ok && strings.HasSuffix(p, " <==") {
			if err := flush(); err != nil {
				return err
			}
			path = strings.TrimSuffix(p, " <==")
			body.Reset()
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return flush()
}

// guestCollector runs host collectors over the mirror's newest read.
type guestCollector struct {
	g     *Guest
	label string
	inner []collector
	used  time.Time // readAt of the read the previous tick used
}

func (c *guestCollector) name() string { return "guest " + c.label }

// collect uses the newest read; when no read completed since the previous tick it adds nothing
// (the next tick's rates then span the longer gap), and when reads keep failing it says why.
func (c *guestCollector) collect(r reading) error {
	c.g.start()
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	if c.g.readAt.IsZero() || !c.g.readAt.After(c.used) {
		if c.g.err != nil {
			return c.g.err
		}
		return errNoNewRead
	}
	c.used = c.g.readAt
	for _, in := range c.inner {
		if err := in.collect(r); err != nil {
			return fmt.Errorf("%s: %w", in.name(), err)
		}
	}
	r.set("guest_read_seconds", c.g.readTook.Seconds())
	r.set("guest_read_age_seconds", time.Since(c.g.readAt).Seconds())
	return nil
}

// groupCollector is the server's group in the guest, parsed like a v2 group on the host.
func (g *Guest) groupCollector() collector {
	ref := cgroup.On(cgroup.V2, g.group)
	return &guestCollector{g: g, label: "cgroup " + g.group,
		inner: []collector{&v2Collector{ref: ref, dir: filepath.Join(g.mirror, g.group)}}}
}

// systemCollector is the whole guest: CPU by mode, memory, load, pressure and its virtio disks.
func (g *Guest) systemCollector() (collector, error) {
	rt := roots{proc: filepath.Join(g.mirror, "proc"), sys: filepath.Join(g.mirror, "sys")}
	host, err := newHostCollectors(rt)
	if err != nil {
		return nil, err
	}
	bfs, err := blockdevice.NewFS(rt.proc, rt.sys)
	if err != nil {
		return nil, err
	}
	return &guestCollector{g: g, label: "system", inner: append(host, guestDisks{bfs})}, nil
}

// guestDisks reads every whole virtio disk of the guest (vda, vdb, …) from its diskstats.
type guestDisks struct{ fs blockdevice.FS }

func (guestDisks) name() string { return "guest disks" }

func (c guestDisks) collect(r reading) error {
	disks, err := c.fs.ProcDiskstats()
	if err != nil {
		return err
	}
	for _, d := range disks {
		n := d.Info.DeviceName
		if len(n) != 3 || !strings.HasPrefix(n, "vd") {
			continue
		}
		if err := diskValues(r, disks, "disk_", &blockdev.Device{Name: n, Major: d.Info.MajorNumber, Minor: d.Info.MinorNumber}); err != nil {
			return err
		}
	}
	return nil
}
