package native

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/internal/resource"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/cassandra"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testenv"
)

func TestCheck(t *testing.T) {
	p := New()
	for _, tc := range []struct {
		c    platform.Choice
		want string
	}{
		{platform.Choice{Storage: "bind", Network: "host"}, ""},
		{platform.Choice{Storage: "blockdev", Network: "unix"}, ""},
		{platform.Choice{Storage: "overlay", Network: "host"}, "no container layer"},
		{platform.Choice{Storage: "bind", Network: "bridge-published"}, "no network"},
		{platform.Choice{Storage: "bind", Network: "host", Runtime: "runc"}, "no OCI runtime"},
		// Issue 19: a missing system user failed every run at start; Check catches it.
		{platform.Choice{Storage: "bind", Network: "host", DBMS: userless{}}, `system user "boxbench-no-such-user"`},
		{platform.Choice{Storage: "bind", Network: "unix", DBMS: cassandra.Cassandra{}}, "cassandra has no unix socket"},
	} {
		err := p.Check(context.Background(), tc.c)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%+v) = %v, want %q", tc.c, err, tc.want)
		}
	}
}

// userless is Redis run as a user this host does not have.
type userless struct{ redis.Redis }

func (userless) User() string { return "boxbench-no-such-user" }

// TestProvision starts every database on every native storage backend, checks the limits in
// the kernel, and checks that teardown leaves no process, cgroup, mount or directory behind.
func TestProvision(t *testing.T) {
	testenv.NeedRoot(t)
	exp := fmt.Sprintf("test-native-%d", os.Getpid())
	for _, name := range databases.Names() {
		for _, st := range []string{storage.Bind, storage.Tmpfs, storage.Blockdev} {
			if name == "cassandra" && st != storage.Bind {
				// A JVM start costs 20-30 s here; the tmpfs and block device paths are the
				// platform's and the other databases cover them.
				continue
			}
			t.Run(name+"/"+st, func(t *testing.T) {
				d, _ := databases.Get(name)
				testenv.NeedCommands(t, dbms.ServerBinary(d))
				run := "r-" + st
				work := filepath.Join(testenv.WorkRoot(t), "boxbench-"+run)
				// A bound against a hang, beyond the database's own readiness bound (Cassandra's
				// JVM under this 1-cpu quota beside a cold CI run's builds took over 3 minutes).
				ctx, cancel := context.WithTimeout(context.Background(), dbms.ReadyTimeout(d, platform.ReadyTimeout)+2*time.Minute)
				defer cancel()
				lim := resource.Limits{CPUs: 1, MemoryBytes: 512 << 20, CPUWeight: 200}
				b, err := New().Provision(ctx, platform.Request{Experiment: exp, Run: run, WorkDir: work,
					DBMS: d, Choice: platform.Choice{Storage: st, Network: "host"}, Resources: lim,
					StorageOpts: platform.StorageOptions{BlockdevSize: 512 << 20, TmpfsSize: 512 << 20}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = b.Teardown(context.Background()) })
				if got := b.Applied().Limits; got.CPUs != 1 || got.MemoryBytes != 512<<20 || got.CPUWeight != 200 {
					t.Errorf("applied limits %+v, want cpus=1 memory=512MiB cpu_weight=200", got)
				}
				pid := b.(*box).pid()
				pids, _ := b.Observe().Cgroup.Pids()
				if !contains(pids, pid) {
					t.Errorf("server pid %d not in its cgroup %v", pid, pids)
				}
				if err := d.Ready(ctx, b.Endpoint(), d.Client()); err != nil {
					t.Fatal(err)
				}
				if err := b.Teardown(ctx); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Kill(pid, 0); err == nil {
					t.Errorf("server pid %d still alive after teardown", pid)
				}
				if _, err := os.Stat(b.Observe().Cgroup.Dir("memory")); !os.IsNotExist(err) {
					t.Errorf("cgroup %s left behind", b.Observe().Cgroup.Dir("memory"))
				}
				if storage.IsMountPoint(filepath.Join(work, "data")) {
					t.Errorf("storage still mounted")
				}
				if _, err := os.Stat(work); !os.IsNotExist(err) {
					t.Errorf("work dir %s left behind", work)
				}
			})
		}
	}
	_ = cgroup.At("/boxbench/" + exp).Remove()
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestBoxProcessesKeepTheNormalPolicy starts a box and runs a command in it while this process
// (the client) runs under placement.clientPolicy idle: neither may inherit the policy, or the
// database would be starved like the client.
func TestBoxProcessesKeepTheNormalPolicy(t *testing.T) {
	testenv.NeedRoot(t)
	var d dbms.DBMS = redis.Redis{}
	testenv.NeedCommands(t, dbms.ServerBinary(d), "chrt")
	exp := fmt.Sprintf("test-native-policy-%d", os.Getpid())
	defer func() { _ = cgroup.At("/boxbench/" + exp).Remove() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	restore, err := placement.SetPolicy(placement.PolicyIdle)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := restore(); err != nil {
			t.Error(err)
		}
	}()
	b, err := New().Provision(ctx, platform.Request{Experiment: exp, Run: "r-policy",
		WorkDir: filepath.Join(testenv.WorkRoot(t), "boxbench-r-policy"), DBMS: d,
		Choice: platform.Choice{Storage: storage.Bind, Network: "host"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Teardown(context.Background()) }()
	if me, _ := placement.Policy(0); me != placement.PolicyIdle {
		t.Fatalf("this thread's policy is %s, want idle: the test tests nothing", me)
	}
	if got, err := placement.Policy(b.(*box).pid()); err != nil || got != placement.PolicyNormal {
		t.Errorf("server policy %q (%v), want normal", got, err)
	}
	out, err := b.Exec(ctx, []string{"cat", "/proc/self/sched"})
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^policy\s*:\s*(\d+)`).FindSubmatch(out); m == nil || string(m[1]) != "0" {
		t.Errorf("a command run in the box has policy %q, want 0 (SCHED_OTHER):\n%s", m, out)
	}
}

// The socket directory is named from the work directory's clean absolute form: the provision
// (the runner's WorkRoot joined by hand) and the crash cleanup (a listing of the work root)
// name the same one however the work root was written.
func TestRunDirForClean(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	want := runDirFor(filepath.Join(wd, "work", "exp", "r0001"))
	for _, d := range []string{"work/exp/r0001", "work//exp/r0001", wd + "/work/exp/r0001/", "./work/exp/./r0001"} {
		if got := runDirFor(d); got != want {
			t.Errorf("runDirFor(%q) = %s, want %s", d, got, want)
		}
	}
}
