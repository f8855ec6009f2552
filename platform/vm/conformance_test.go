package vm

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/images/vmimage"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostnet"
	"github.com/boxbench/boxbench/testkit/platformtest"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/workload"
	"github.com/boxbench/boxbench/workload/fio"
)

// TestConformance runs the platform suite on QEMU guests with Redis, over every storage and
// both networks, and fio inside the first guest through its agent (fioInGuest).
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("boots QEMU guests (minutes under TCG)")
	}
	p := needVM(t, "redis")
	var d dbms.DBMS = redis.Redis{}
	root := testenv.WorkRoot(t)
	platformtest.Run(t, platformtest.Config{
		Platform: p, DBMS: d, WorkRoot: root, Experiment: fmt.Sprintf("pt-vm-%d", os.Getpid()),
		Choices: []platform.Choice{{Storage: StorageRootfs, Network: NetworkNAT}, {Storage: storage.Blockdev, Network: NetworkBridge},
			{Storage: storage.Tmpfs, Network: NetworkNAT}},
		Resources:   resource.Limits{CPUs: 1, Cpuset: "1", MemoryBytes: 512 << 20, CPUWeight: 200, WriteBps: 64 << 20},
		StorageOpts: platform.StorageOptions{BlockdevSize: 256 << 20, TmpfsSize: 256 << 20},
		Leftovers:   func(ctx context.Context, exp string) []string { return leftovers(ctx, root, exp) },
		StepTimeout: 12 * time.Minute,
		Also:        fioInGuest,
	})
}

// fioInGuest runs the fsync-high job through the box's Exec (the guest agent), on the guest's
// data directory, as the runner does for a fio cell: writes and fsyncs are counted, 5 writes to
// an fsync, with latencies, and fio's directory is gone afterwards. (e2e TestVMRun ran this as
// a cell of its own, booting one more guest under emulation for it.)
func fioInGuest(ctx context.Context, t *testing.T, b platform.Box) {
	c := fio.DefaultConfig()
	c.Job, c.Duration, c.Warmup, c.Size = "fsync-high", 3*time.Second, 0, 16<<20
	w, err := fio.New(c)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Run(ctx, workload.Target{DBMS: "redis", Box: b, DataDir: b.DataDir()}, workload.Clock{Start: time.Now()})
	if err != nil {
		t.Fatalf("fio in the guest: %v", err)
	}
	ops := map[string]workload.OpSummary{}
	for _, o := range res.Ops {
		if o.Series == "latency" {
			ops[o.Op] = o
		}
	}
	wr, fs := ops["write"], ops[fio.OpFsync]
	if wr.Count == 0 || fs.Count == 0 || fs.P50 <= 0 || res.Metrics["write_iops"] <= 0 {
		t.Errorf("fio in the guest: ops %v, metrics %v", ops, res.Metrics)
	} else if r := float64(wr.Count) / float64(fs.Count); r < 4.9 || r > 5.1 {
		t.Errorf("fio in the guest: %d writes for %d fsyncs, want 5 to 1", wr.Count, fs.Count)
	}
	dir := path.Join(b.DataDir(), fio.Subdir)
	if out, err := b.Exec(ctx, []string{"test", "!", "-e", dir}); err != nil {
		t.Errorf("fio's directory %s is left in the guest: %v %s", dir, err, out)
	}
}

// TestConformanceDocker runs the suite on vm-docker: Redis in a container of the guest's
// dockerd, in the container's layer and in a guest directory bound in.
func TestConformanceDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("boots QEMU guests (minutes under TCG)")
	}
	p := needVMDocker(t, "redis")
	var d dbms.DBMS = redis.Redis{}
	root := testenv.WorkRoot(t)
	platformtest.Run(t, platformtest.Config{
		Platform: p, DBMS: d, WorkRoot: root, Experiment: fmt.Sprintf("pt-vmd-%d", os.Getpid()),
		Choices:     []platform.Choice{{Storage: StorageOverlay, Network: NetworkNAT}, {Storage: StorageBind, Network: NetworkBridge}},
		Resources:   resource.Limits{CPUs: 1, Cpuset: "1", MemoryBytes: 768 << 20, CPUWeight: 200, WriteBps: 64 << 20},
		Leftovers:   func(ctx context.Context, exp string) []string { return leftovers(ctx, root, exp) },
		StepTimeout: 15 * time.Minute,
	})
}

// leftovers adds the boxes' taps and bridges to the host's boxbench places.
func leftovers(ctx context.Context, root, exp string) []string {
	left := platformtest.HostLeftovers(root, exp)
	out, _ := command.Run(ctx, "ip", "-o", "link", "show")
	for _, line := range strings.Split(string(out), "\n") {
		for i := 1; i <= 10; i++ {
			run := fmt.Sprintf("pt%02d", i)
			for _, name := range []string{hostnet.Name(hostnet.PrefixBridge, exp, run), hostnet.Name(hostnet.PrefixTap, exp, run)} {
				if strings.Contains(line, " "+name+":") {
					left = append(left, "interface "+name)
				}
			}
		}
	}
	return left
}

// needVM returns the vm platform when QEMU and the database's guest image are here.
func needVM(t *testing.T, dbName string) *Platform {
	return need(t, New(rootfs.NewCache(rootfs.DefaultRoot, nil), vmimage.Cache{}, nil), dbName, StorageRootfs)
}

// needVMDocker returns the vm-docker platform when QEMU and the database's docker guest image
// are here.
func needVMDocker(t *testing.T, dbName string) *Platform {
	return need(t, NewDocker(rootfs.NewCache(rootfs.DefaultRoot, nil), vmimage.Cache{}, nil), dbName, StorageOverlay)
}

func need(t *testing.T, p *Platform, dbName, st string) *Platform {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "qemu-system-x86_64", "qemu-img", "mkfs.ext4")
	testenv.Await(t, testenv.GuestImages)
	d, _ := databases.Get(dbName)
	if err := p.Check(context.Background(), platform.Choice{DBMS: d, Storage: st, Network: NetworkNAT}); err != nil {
		testenv.Skip(t, err.Error()+" (make images builds the root filesystems and guest images)")
	}
	return p
}
