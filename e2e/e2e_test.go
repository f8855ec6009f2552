// Package e2e runs the real boxbench binary against real databases: the end-to-end tier. It
// keeps what only the binary can show — signals and kill -9 at each phase, `doctor --cleanup`,
// `--resume`, full disks, the engine restarted under a run, the commands' output — and runs
// every experiment kind once through it; what a platform, the runner or a cluster does alone is
// tested in its own package. The tests run in parallel (they wait on servers, guests and pods
// far more than they compute), at most 4 at work at once (parallel); a test that uses a shared
// resource holds its lock (testenv.Hold, testenv.HoldShared).
package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/boxbench/boxbench/testkit/testenv"
)

var bin string

// working holds a slot for each test doing work: at most 4 at once, beyond which the tests'
// own servers and clients contend for the 2 CPUs of the CI machine. go test's -parallel does
// not bound them (it is set far above): it would count a test that waits for the suite's
// preparations as working — three tests waited for the local cluster and the guest images for
// up to 13 minutes of the cold run of 2026-11-27 17:52, leaving the others 1 slot of 4.
var working = make(chan struct{}, 4)

// goParallel is go test's -parallel unless given: above every test at once, so that working
// is the bound.
const goParallel = "64"

// parallel is t.Parallel for a test without parallel subtests (a test with them calls
// t.Parallel itself: go releases a parent while its subtests run, and a parent holding a slot
// while its subtests wait for one could leave none). It waits for the suite's preparations the
// test needs (testenv.Await), then for a working slot, held until the test and its cleanups
// end. A test that takes a lock (testenv.Hold) takes it after its slot.
// A test called parallel by mistake when it has parallel subtests fails at once, naming both,
// instead of risking the suite's deadlock.
func parallel(t *testing.T, prerequisites ...string) {
	t.Helper()
	if a := slots.ancestor(t.Name()); a != "" {
		t.Fatalf("%s calls parallel while its parent %s holds a working slot: a test with parallel subtests calls t.Parallel, not parallel", t.Name(), a)
	}
	t.Parallel()
	for _, p := range prerequisites {
		testenv.Await(t, p)
	}
	working <- struct{}{}
	slots.hold(t.Name())
	t.Cleanup(func() {
		slots.release(t.Name())
		<-working
	})
}

// slots names the tests holding a working slot.
var slots = holders{names: map[string]bool{}}

type holders struct {
	mu    sync.Mutex
	names map[string]bool
}

func (h *holders) hold(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.names[name] = true
}

func (h *holders) release(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.names, name)
}

// ancestor is the holder that test name is a subtest of, or "".
func (h *holders) ancestor(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for n := range h.names {
		if strings.HasPrefix(name, n+"/") {
			return n
		}
	}
	return ""
}

func TestSlotAncestor(t *testing.T) {
	h := holders{names: map[string]bool{}}
	h.hold("TestA")
	h.hold("TestB/sub")
	for name, want := range map[string]string{
		"TestA/x": "TestA", "TestA/x/y": "TestA", "TestAB/x": "", "TestA": "", "TestB/sub/z": "TestB/sub", "TestB/other": "",
	} {
		if got := h.ancestor(name); got != want {
			t.Errorf("ancestor(%q) = %q, want %q", name, got, want)
		}
	}
	h.release("TestA")
	if got := h.ancestor("TestA/x"); got != "" {
		t.Errorf("after release, ancestor = %q", got)
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", goParallel)
	}
	bin = os.Getenv("BOXBENCH_BIN")
	if bin == "" && !testing.Short() {
		dir, err := os.MkdirTemp("", "boxbench-e2e-bin-")
		if err != nil {
			panic(err)
		}
		bin = filepath.Join(dir, "boxbench")
		out, err := exec.Command("go", "build", "-o", bin, "../cmd/boxbench").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build boxbench: %v\n%s", err, out)
			os.Exit(1)
		}
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
