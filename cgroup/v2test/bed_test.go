package v2test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/command"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/rootfs"
)

// BedCache is where the test bed's base (the guest's kernel, initrd and ext4 image) is kept,
// by the hash of its inputs.
const BedCache = "/var/cache/boxbench/v2bed"

// bootTimeout bounds one boot and test of the guest under TCG (measured: see docs/cgroup-v2.md).
const bootTimeout = 9 * time.Minute

// TestBed builds the cgroup v2 test bed (once; cached), boots it in QEMU (TCG) with a kernel
// that mounts only cgroup v2, runs TestNativeOnV2 inside, and fails if it fails there.
func TestBed(t *testing.T) {
	if os.Getenv(GuestEnv) != "" {
		t.Skip("inside the guest")
	}
	if testing.Short() {
		t.Skip("boots a QEMU guest (minutes): not a unit test")
	}
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "qemu-system-x86_64", "mkfs.ext4", "debugfs", "unshare", "chroot")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()

	d, _ := dbms.Get("redis")
	tree, err := rootfs.NewCache("", nil).Find(ctx, d)
	if err != nil {
		testenv.Skip(t, fmt.Sprintf("no cached redis root filesystem: %v", err))
	}
	start := time.Now()
	base, err := ensureBase(ctx, t, tree)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("base %s ready in %s", base, time.Since(start).Round(time.Second))

	// The guest test binary: this package, static, so it needs nothing from the guest's libc.
	work := t.TempDir()
	bin := filepath.Join(work, "v2test.test")
	if _, err := command.RunWith(ctx, command.Options{Env: []string{"CGO_ENABLED=0"}},
		"go", "test", "-c", "-o", bin, "."); err != nil {
		t.Fatal(err)
	}
	// The disk: a sparse copy of the cached base with the init script and the binary written
	// in by debugfs (no loop mount).
	disk := filepath.Join(work, "disk.img")
	if _, err := command.Run(ctx, "cp", "--sparse=always", filepath.Join(base, "base.img"), disk); err != nil {
		t.Fatal(err)
	}
	initSh, _ := filepath.Abs("bed/init.sh")
	for _, req := range []string{"mkdir /v2bed", "write " + bin + " /v2bed/v2test.test", "write " + initSh + " /boxbench-init"} {
		if out, err := command.Run(ctx, "debugfs", "-w", "-R", req, disk); err != nil || strings.Contains(string(out), "rror") {
			t.Fatalf("debugfs %s: %v %s", req, err, out)
		}
	}

	console := filepath.Join(work, "console.log")
	boot := time.Now()
	bctx, bcancel := context.WithTimeout(ctx, bootTimeout)
	defer bcancel()
	_, qerr := command.Run(bctx, "qemu-system-x86_64", "-accel", "tcg", "-m", "1024", "-smp", "2",
		"-display", "none", "-monitor", "none", "-no-reboot", "-serial", "file:"+console,
		"-kernel", filepath.Join(base, "vmlinuz"), "-initrd", filepath.Join(base, "initrd.img"),
		"-append", "root=/dev/vda rw console=ttyS0 init=/boxbench-init quiet panic=-1 cgroup_no_v1=all",
		"-drive", "file="+disk+",format=raw,if=virtio")
	took := time.Since(boot)
	out, _ := os.ReadFile(console)
	r := parseConsole(string(out))
	t.Logf("boot + guest test: %s (TCG); guest uptime at start of test %s s, at end %s s", took.Round(time.Second), r.uptimeStart, r.uptimeEnd)
	for _, l := range r.report {
		t.Log("guest: " + l)
	}
	if qerr != nil && !r.done {
		t.Fatalf("qemu: %v\nconsole tail:\n%s", qerr, command.Tail(out, 4000))
	}
	if !r.done {
		t.Fatalf("the guest never reported a result\nconsole tail:\n%s", command.Tail(out, 4000))
	}
	if r.rc != 0 {
		t.Errorf("the guest test failed (rc=%d)", r.rc)
	}
	if r.left != "" {
		t.Errorf("groups left under /sys/fs/cgroup in the guest: %s", r.left)
	}
	if !onlyV2(r.mounts) {
		t.Errorf("the guest's cgroup mounts are %q, want cgroup2 only", r.mounts)
	}
}

// bedResult is what the guest printed between its markers.
type bedResult struct {
	report                 []string // the lines between V2BED-BEGIN and V2BED-END, and the facts
	mounts, left           string
	uptimeStart, uptimeEnd string
	rc                     int
	done                   bool
}

func parseConsole(s string) bedResult {
	var r bedResult
	in := false
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), "\r")
		switch {
		case l == "V2BED-BEGIN":
			in = true
		case l == "V2BED-END":
			in = false
		case strings.HasPrefix(l, "V2BED-CGROUP-MOUNTS "):
			r.mounts = strings.TrimPrefix(l, "V2BED-CGROUP-MOUNTS ")
			r.report = append(r.report, l)
		case strings.HasPrefix(l, "V2BED-LEFT"):
			r.left = strings.TrimSpace(strings.TrimPrefix(l, "V2BED-LEFT"))
		case strings.HasPrefix(l, "V2BED-UPTIME-START "):
			r.uptimeStart = strings.TrimPrefix(l, "V2BED-UPTIME-START ")
		case strings.HasPrefix(l, "V2BED-UPTIME-END "):
			r.uptimeEnd = strings.TrimPrefix(l, "V2BED-UPTIME-END ")
		case strings.HasPrefix(l, "V2BED-RESULT rc="):
			_, err := fmt.Sscanf(l, "V2BED-RESULT rc=%d", &r.rc)
			r.done = err == nil
		case strings.HasPrefix(l, "V2BED-"):
			r.report = append(r.report, l)
		case in:
			r.report = append(r.report, l)
		}
	}
	return r
}

// ensureBase returns the cached base directory for tree, building it with bed/base.sh under an
// exclusive lock when it is missing. Its key is the hash of the script and the tree's recipe.
func ensureBase(ctx context.Context, t *testing.T, tree rootfs.Tree) (string, error) {
	script, err := os.ReadFile("bed/base.sh")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", script, tree.Hash)
	dir := filepath.Join(BedCache, "base-"+hex.EncodeToString(h.Sum(nil))[:16])
	if err := os.MkdirAll(BedCache, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(dir, "base.img")); err == nil {
		return dir, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	t.Logf("building the test bed base in %s (once: apt installs Debian's kernel in a copy of %s)", dir, tree.Dir)
	abs, _ := filepath.Abs("bed/base.sh")
	if _, err := command.Run(ctx, "bash", abs, tree.Dir, dir); err != nil {
		return "", fmt.Errorf("build the test bed base: %w", err)
	}
	return dir, nil
}

// onlyV2 says whether the guest's cgroup mounts (/proc/mounts lines joined by ";") are cgroup2
// only: at least one, and none of type cgroup (v1).
func onlyV2(mounts string) bool {
	n := 0
	for _, m := range strings.Split(mounts, ";") {
		f := strings.Fields(m)
		if len(f) < 3 {
			continue
		}
		switch f[2] {
		case "cgroup2":
			n++
		case "cgroup":
			return false
		}
	}
	return n > 0
}

func TestParseConsole(t *testing.T) {
	if !onlyV2("cgroup2 /sys/fs/cgroup cgroup2 rw,relatime 0 0;") || onlyV2("cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0;cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0;") || onlyV2("") {
		t.Error("onlyV2")
	}
	r := parseConsole("noise\r\nV2BED-CGROUP-MOUNTS cgroup2 /sys/fs/cgroup cgroup2 rw 0 0;\nV2BED-BEGIN\n=== RUN   TestNativeOnV2\n--- PASS: TestNativeOnV2 (3.2s)\nV2BED-END\nV2BED-LEFT \nV2BED-RESULT rc=0\n")
	if !r.done || r.rc != 0 || r.left != "" || len(r.report) != 3 || !strings.Contains(r.mounts, "cgroup2") {
		t.Errorf("%+v", r)
	}
	if r := parseConsole("V2BED-BEGIN\n--- FAIL\nV2BED-LEFT /sys/fs/cgroup/boxbench\nV2BED-RESULT rc=1\n"); r.rc != 1 || r.left == "" {
		t.Errorf("%+v", r)
	}
	if r := parseConsole("Kernel panic\n"); r.done {
		t.Errorf("%+v", r)
	}
}
