package native

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestPortTaken: the chosen port is taken (by a listener that accepts and never answers, the
// worst case for a probe) before the server binds it: Provision fails with the server's
// complaint in its log tail, and removes everything it made.
func TestPortTaken(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, never answer
		}
	}()
	defer func(f func() (int, error)) { freePort = f }(freePort)
	freePort = func() (int, error) { return l.Addr().(*net.TCPAddr).Port, nil }
	exp := fmt.Sprintf("test-native-port-%d", os.Getpid())
	defer func() { _ = cgroup.At("/boxbench/" + exp).Remove() }()
	work := filepath.Join(testenv.WorkRoot(t), "boxbench-port")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := dbms.WithPassword(redis.Redis{}, dbms.NewPassword())
	b, err := New().Provision(ctx, platform.Request{Experiment: exp, Run: "port", WorkDir: work, DBMS: d,
		Choice: platform.Choice{Storage: "bind", Network: "host"}, Resources: resource.Limits{CPUs: 1, MemoryBytes: 256 << 20}})
	if err == nil {
		_ = b.Teardown(ctx)
		t.Fatal("a server whose port was taken came up")
	}
	if !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "in use") {
		t.Errorf("error without the reason: %v", err)
	}
	if _, serr := os.Stat(work); !os.IsNotExist(serr) {
		t.Errorf("work directory left: %v", serr)
	}
	if _, serr := os.Stat(filepath.Join(cgroup.Root, "memory", "boxbench", exp, "port")); !os.IsNotExist(serr) && cgroup.HostVersion() != cgroup.V2 {
		t.Errorf("cgroup left: %v", serr)
	}
}
