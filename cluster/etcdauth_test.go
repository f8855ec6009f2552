package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/etcd"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestEtcdNoAuthWindow starts a 3-member etcd cluster with a password natively while a prober
// tries an unauthenticated put on every client port the cluster was given, every 50 ms, from
// before the first member starts until the cluster is ready: no put may ever succeed (members
// 2..N serve clients on the network only once authentication is on). The peer ports are
// probed too and their successes logged: etcd 3.4 also serves its v3 API on the peer listener,
// which must be open for the cluster to form (the window docs/topology.md states). Once ready, an
// unauthenticated put to every member is refused and an authenticated one through every
// member succeeds.
func TestEtcdNoAuthWindow(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "etcd", "etcdctl")
	var mu sync.Mutex
	var ports []int
	reservePort = func() (int, error) {
		p, err := platform.FreePort()
		mu.Lock()
		ports = append(ports, p)
		mu.Unlock()
		return p, err
	}
	defer func() { reservePort = platform.FreePort }()
	unauthPut := func(ctx context.Context, addr string) error {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + addr}, DialTimeout: 300 * time.Millisecond,
			Logger: zap.NewNop(), Context: ctx})
		if err != nil {
			return err
		}
		defer cli.Close()
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = cli.Put(pctx, "boxbench-window", "open")
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	pctx, stopProbe := context.WithCancel(ctx)
	var opened atomic.Int32
	var tries atomic.Int32
	var peerOpen atomic.Int32 // etcd 3.4 serves its v3 API on the peer listener too (docs/topology.md)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for pctx.Err() == nil {
			mu.Lock()
			ps := append([]int(nil), ports...)
			mu.Unlock()
			for i, p := range ps {
				err := unauthPut(pctx, fmt.Sprintf("127.0.0.1:%d", p))
				// place reserves each node's ports in listener-name order: client, then peer.
				if i%2 == 1 {
					if err == nil {
						peerOpen.Add(1)
					}
					continue
				}
				tries.Add(1)
				if err == nil {
					opened.Add(1)
					t.Errorf("an unauthenticated put succeeded on client port %d during the start (ports: %v)", p, ps)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	exp := fmt.Sprintf("test-etcdauth-%d", os.Getpid())
	work := testenv.WorkRoot(t)
	var d dbms.DBMS = etcd.Etcd{}
	pw := dbms.NewPassword()
	b, err := Provision(ctx, native.New(), platform.Request{Experiment: exp, Run: "r0001",
		WorkDir: filepath.Join(work, exp, "r0001"), DBMS: dbms.WithPassword(d, pw),
		Choice:    platform.Choice{Storage: "bind", Network: "host"},
		Resources: resource.Limits{CPUs: 0.5, MemoryBytes: 256 << 20}}, dbms.Topology{Nodes: 3})
	stopProbe()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Teardown(context.Background()); err != nil {
			t.Error(err)
		}
		assertNothingLeft(t, exp, work)
	}()
	t.Logf("%d unauthenticated puts tried on client ports during the start, %d succeeded; on peer ports, %d succeeded (the known window)",
		tries.Load(), opened.Load(), peerOpen.Load())
	for _, m := range b.Endpoint().Members {
		err := unauthPut(ctx, m.String())
		if err == nil || !strings.Contains(err.Error(), "user name is empty") {
			t.Errorf("member %s: unauthenticated put: %v, want refused (user name is empty)", m, err)
		}
		cfg := etcd.EtcdConfig(m, d.Client())
		cfg.Username, cfg.Password = etcd.EtcdUser, pw
		cli, err := clientv3.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Put(ctx, "boxbench-auth", "ok"); err != nil {
			t.Errorf("member %s: authenticated put: %v", m, err)
		}
		cli.Close()
	}
}
