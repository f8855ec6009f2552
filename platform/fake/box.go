package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
)

// seedFile is the store's rows in a snapshot directory (Capture writes it, a seed restores it).
const seedFile = "rows.json"

// cpuPerOp is the CPU time the fake server accounts per operation, so that its telemetry
// (Observe's stats) moves with the load as a real server's does.
const cpuPerOp = 2 * time.Microsecond

// Box is one fake box: a store in memory behind a loopback port (none for an idle box).
type Box struct {
	p   *Platform
	req platform.Request

	mu       sync.Mutex
	srv      *server // nil for an idle box, and after Teardown
	stopped  bool
	torn     bool
	restored string
}

var _ platform.Box = (*Box)(nil)

func (b *Box) start(ctx context.Context) error {
	if dbms.IsIdle(b.req.DBMS) {
		return nil // a neighbour's box: no database, only its directory
	}
	rows := map[string]map[string][]byte{}
	b.restored = "empty"
	if s := b.req.Seed; s != nil {
		data, err := os.ReadFile(filepath.Join(s.Dir, seedFile))
		if err != nil {
			return fmt.Errorf("restore seed %s: %w", s.Key, err)
		}
		if err := json.Unmarshal(data, &rows); err != nil {
			return fmt.Errorf("restore seed %s: %w", s.Key, err)
		}
		b.restored = fmt.Sprintf("seed %s: %d rows", s.Key, len(rows))
	}
	port := 0
	if n := b.req.Node; n != nil {
		port = n.Ports[dbms.PortClient]
	}
	password := b.req.DBMS.Client().Password
	srv, err := serve(port, password, rows, func(op string) error { return b.p.fault(FaultServe+":"+op, b.req) })
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.srv = srv
	b.mu.Unlock()
	return platform.WaitReadyFor(ctx, b.req.DBMS, srv.endpoint(), nil, nil, 10*time.Second, time.Second)
}

func (b *Box) server() *server {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.srv
}

func (b *Box) Endpoint() driver.Endpoint {
	if s := b.server(); s != nil {
		return s.endpoint()
	}
	return driver.Endpoint{Host: "127.0.0.1"}
}

func (b *Box) DataDir() string { return b.req.WorkDir }

// Observe: the fake's own account, as an orchestrator's stats (the host cannot see into it).
func (b *Box) Observe() platform.Observation {
	s := b.server()
	return platform.Observation{Stats: &platform.StatsView{Via: "the fake platform's count of operations",
		Read: func(context.Context) (map[string]float64, time.Time, error) {
			if s == nil {
				return map[string]float64{"cpu_usage_seconds_total": 0, "memory_usage_bytes": 0}, time.Now(), nil
			}
			return map[string]float64{"cpu_usage_seconds_total": (time.Duration(s.ops.Load()) * cpuPerOp).Seconds(),
				"memory_usage_bytes": float64(s.size.Load())}, time.Now(), nil
		}},
		Missing: []string{"cgroup: a fake box is no group on this host"}}
}

// Applied: the request, as if every limit took effect.
func (b *Box) Applied() resource.Applied {
	return resource.Applied{Limits: b.req.Resources, From: "fake: as requested"}
}

func (b *Box) Traits() platform.Traits {
	t := platform.Traits{Emulated: b.p.o.Emulated, Orchestrator: b.p.o.Orchestrator}
	if b.p.o.Agent != nil {
		t.Site = &site{serve: b.p.o.Agent, ep: b.Endpoint()}
	}
	return t
}

func (b *Box) Warnings() []platform.Warning { return b.p.o.Warnings }

func (b *Box) Facts() map[string]string {
	f := map[string]string{"platform_fake": "in memory", "restore": b.restored}
	if o := b.p.o.Orchestrator; o != nil {
		for _, of := range o.Facts {
			if of.Value != "" {
				f[of.Key] = of.Value
			}
		}
	}
	return f
}

// Exec runs nothing: it returns argv joined, or the injected fault.
func (b *Box) Exec(_ context.Context, argv []string) ([]byte, error) {
	if err := b.p.fault(FaultExec, b.req); err != nil {
		return nil, err
	}
	return []byte(fmt.Sprint(argv)), nil
}

func (b *Box) LogTail(int) string {
	if s := b.server(); s != nil {
		return fmt.Sprintf("fake server: %d operations served", s.ops.Load())
	}
	return ""
}

// Stop closes the server's port; its rows stay for Capture.
func (b *Box) Stop(context.Context) error {
	if err := b.p.fault(FaultStop, b.req); err != nil {
		return err
	}
	if s := b.server(); s != nil {
		s.stop()
	}
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	return nil
}

// Capture writes the stopped store's rows into dst.
func (b *Box) Capture(_ context.Context, dst string) error {
	if err := b.p.fault(FaultCapture, b.req); err != nil {
		return err
	}
	s := b.server()
	b.mu.Lock()
	stopped := b.stopped
	b.mu.Unlock()
	if s == nil || !stopped {
		return fmt.Errorf("fake capture: the server is not stopped")
	}
	data, err := json.Marshal(s.snapshot())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, seedFile), data, 0o644)
}

// Teardown stops the server and removes the work directory; idempotent, safe concurrently.
// An injected fault is returned after the box is gone (as a real platform reports what it
// could not remove).
func (b *Box) Teardown(context.Context) error {
	b.mu.Lock()
	s, torn := b.srv, b.torn
	b.torn = true
	b.mu.Unlock()
	if torn {
		return nil
	}
	if s != nil {
		s.stop()
	}
	err := os.RemoveAll(b.req.WorkDir)
	b.p.mu.Lock()
	delete(b.p.boxes, b)
	b.p.mu.Unlock()
	if ferr := b.p.fault(FaultTeardown, b.req); ferr != nil {
		return ferr
	}
	return err
}

// site is a client site whose agent runs in this process, speaking the agent's protocol.
type site struct {
	serve func(ctx context.Context, stdin io.Reader, stdout io.Writer) error
	ep    driver.Endpoint
}

func (s *site) ClientPlace() (string, driver.Endpoint) {
	return "the fake platform's client site (an agent in this process)", s.ep
}

func (s *site) ClientCPUs() string { return "" }

func (s *site) RunAgent(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	return s.serve(ctx, stdin, stdout)
}
