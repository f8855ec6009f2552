// Package e2e runs the real boxbench binary against real databases: the end-to-end tier. It
// keeps what only the binary can show — signals and kill -9 at each phase, `doctor --cleanup`,
// `--resume`, full disks, the engine restarted under a run, the commands' output — and runs
// every experiment kind once through it; what a platform, the runner or a cluster does alone is
// tested in its own package. The tests run in parallel (they wait on servers, guests and pods
// far more than they compute); a test that uses a shared resource holds its lock (testenv.Hold, testenv.HoldShared).
package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var bin string

// parallel is how many tests run at once unless -parallel says otherwise: the default,
// GOMAXPROCS (2 on the CI machine), leaves the CPUs idle while the tests wait; beyond 4 the
// tests' own servers and clients start to contend for the 2 CPUs.
const parallel = "4"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", parallel)
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
