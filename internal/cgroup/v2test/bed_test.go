package v2test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/images/vmimage"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// Bounds of the test bed (measured times: docs/cgroup-v2.md). bedTimeout covers building the
// guest images when the cache has none (the docker variant's build boots a guest to load the
// image: vmimage allows that 20 minutes) and both boots; bootTimeout one boot with its tests.
const (
	bedTimeout  = 35 * time.Minute
	bootTimeout = 9 * time.Minute
)

// bedInit is the bed's init in the guest: the image's own /boxbench-init is the VM platform's.
const bedInit = "/v2bed-init"

// noInit is what Debian's initramfs prints when the init= it was given is not on the root file
// system (it then runs /bin/sh instead).
const noInit = "Target filesystem doesn't have requested"

// bed is one boot of the test bed: a guest image variant and the guest tests run in it.
type bed struct {
	name    string
	variant string // vmimage.Plain or vmimage.Docker
	tests   string // -test.run alternatives, e.g. "TestNativeOnV2"
	memMiB  int
	// mayStay are groups the guest may keep after its tests: ones the engine made for itself
	// (empty; a container's group left in one is a failure).
	mayStay []string
}

var beds = []bed{
	{name: "native", variant: vmimage.Plain, tests: "TestNativeOnV2", memMiB: 1024},
	{name: "docker", variant: vmimage.Docker, tests: "TestDockerOnV2", memMiB: 2048, mayStay: []string{"/sys/fs/cgroup/docker"}},
}

// TestBed boots the VM platform's redis guest images (package vmimage; built when the cache has
// none) in QEMU (TCG) with a kernel that mounts only cgroup v2, and runs the guest tests inside:
// TestNativeOnV2 in the plain image, TestDockerOnV2 in the docker variant (dockerd with the
// redis image loaded). It fails when a guest test fails, reports nothing, leaves groups behind,
// or when any cgroup v1 hierarchy was mounted.
func TestBed(t *testing.T) {
	if os.Getenv(GuestEnv) != "" {
		t.Skip("inside the guest")
	}
	if testing.Short() {
		t.Skip("boots QEMU guests (minutes): not a unit test")
	}
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "qemu-system-x86_64", "mkfs.ext4", "debugfs", "unshare", "chroot")
	// It would build the guest images itself when the cache has none; while the suite's runner
	// builds them, it waits for those instead of building them beside it.
	testenv.Await(t, testenv.GuestImages)
	ctx, cancel := context.WithTimeout(context.Background(), bedTimeout)
	defer cancel()

	var d dbms.DBMS = redis.Redis{}
	tree, err := rootfs.NewCache("", nil).Find(ctx, d)
	if err != nil {
		testenv.Skip(t, fmt.Sprintf("no cached redis root filesystem: %v", err))
	}
	// The guest test binary: this package, static, so it needs nothing from the guest's libc.
	bin := filepath.Join(t.TempDir(), "v2test.test")
	if _, err := command.RunWith(ctx, command.Options{Env: []string{"CGO_ENABLED=0"}},
		"go", "test", "-c", "-o", bin, "."); err != nil {
		t.Fatal(err)
	}
	initSh, err := filepath.Abs("bed/init.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range beds {
		t.Run(b.name, func(t *testing.T) {
			start := time.Now()
			img, built, err := guestImage(ctx, t, tree, b.variant)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("guest image %s (kernel %s) ready in %s (built now: %v)", img.Dir, img.KernelVersion, time.Since(start).Round(time.Second), built)
			b.run(ctx, t, img, bin, initSh)
		})
	}
}

// run boots img with the bed's init and checks what the guest reports.
func (b bed) run(ctx context.Context, t *testing.T, img vmimage.Image, bin, initSh string) {
	work := t.TempDir()
	prep := time.Now()
	disk, err := bedDisk(ctx, work, img, bin, initSh)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("disk (sparse copy of %s with the bed's init and test binary) in %s", img.Disk, time.Since(prep).Round(100*time.Millisecond))

	console := filepath.Join(work, "console.log")
	boot := time.Now()
	// One vCPU: with two, a guest under multi-threaded TCG once locked up both (soft lockups in
	// runc and its child for 400 s, the cold CI run of 2026-11-27) until the boot timeout; the
	// bed's checks pin to cpu 0 and need no second one.
	qerr := runQEMU(ctx, t, bootTimeout, console, "qemu-system-x86_64", "-accel", "tcg,thread=multi", "-machine", "q35", "-cpu", "max",
		"-smp", "1", "-m", fmt.Sprint(b.memMiB), "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-serial", "file:"+console, "-kernel", img.Kernel, "-initrd", img.Initrd,
		"-append", "root=/dev/vda rw console=ttyS0 init="+bedInit+" quiet panic=-1 cgroup_no_v1=all v2bed.run="+b.tests,
		"-drive", "file="+disk+",format=raw,if=none,id=root", "-device", "virtio-blk-pci,drive=root,serial=bbroot")
	took := time.Since(boot)
	out, _ := os.ReadFile(console)
	r := parseConsole(string(out))
	t.Logf("boot + guest tests: %s (TCG); guest uptime at start of the tests %s s, at end %s s", took.Round(time.Second), r.uptimeStart, r.uptimeEnd)
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
		t.Errorf("the guest tests failed (rc=%d)", r.rc)
	}
	if left := unexpected(r.left, b.mayStay); len(left) > 0 {
		t.Errorf("groups left under /sys/fs/cgroup in the guest: %v", left)
	}
	if !onlyV2(r.mounts) {
		t.Errorf("the guest's cgroup mounts are %q, want cgroup2 only", r.mounts)
	}
}

// guestImage returns tree's guest image of variant (building it when the cache has none) and
// holds a shared flock on its cache entry's lock file until the test ends. vmimage's builders
// lock an entry exclusively to build it, and to remove one made from other inputs (another
// checkout's build script or guest files) only when that lock is free: held, the entry stays
// while the bed copies its disk and QEMU reads its kernel.
func guestImage(ctx context.Context, t *testing.T, tree rootfs.Tree, variant string) (vmimage.Image, bool, error) {
	for attempt := 1; ; attempt++ {
		img, built, err := vmimage.Cache{}.Get(ctx, tree, variant)
		if err != nil {
			return img, built, err
		}
		f, err := os.OpenFile(img.Dir+".lock", os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return img, built, err
		}
		for syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
			select {
			case <-ctx.Done():
				f.Close()
				return img, built, fmt.Errorf("wait for a shared lock on %s.lock: %w", img.Dir, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
		if _, err := os.Stat(img.Disk); err == nil {
			t.Cleanup(func() { f.Close() })
			return img, built, nil
		}
		f.Close() // removed between Get and the lock: get it again
		if attempt == 3 {
			return img, built, fmt.Errorf("the guest image %s keeps disappearing", img.Dir)
		}
	}
}

// bedDisk makes the boot's root disk: a sparse copy of the image's disk (debugfs edits raw
// images only) with the test binary as /v2bed/v2test.test and the init script as /v2bed-init,
// written by debugfs (no loop mount).
func bedDisk(ctx context.Context, work string, img vmimage.Image, bin, initSh string) (string, error) {
	disk := filepath.Join(work, "disk.img")
	if _, err := command.Run(ctx, "cp", "--sparse=always", img.Disk, disk); err != nil {
		return "", err
	}
	// The docker variant's disk was last mounted by the guest that loaded the image and powered
	// off without unmounting: its journal must be replayed first, or the kernel's replay at boot
	// overwrites what debugfs wrote (an inode with an invalid checksum). Exit status 1 means
	// "corrected".
	if out, err := command.Run(ctx, "e2fsck", "-y", "-E", "journal_only", disk); err != nil {
		var ce *command.Error
		if !errors.As(err, &ce) || exitCode(ce.Err) != 1 {
			return "", fmt.Errorf("replay the journal of %s: %w %s", disk, err, out)
		}
	}
	cmds := filepath.Join(work, "debugfs.cmds")
	script := "mkdir /v2bed\nwrite " + bin + " /v2bed/v2test.test\nwrite " + initSh + " " + bedInit + "\n"
	if err := os.WriteFile(cmds, []byte(script), 0o644); err != nil {
		return "", err
	}
	out, err := command.Run(ctx, "debugfs", "-w", "-f", cmds, disk)
	if err == nil && strings.Contains(string(out), "rror") {
		err = fmt.Errorf("debugfs: %s", out)
	}
	if err != nil {
		return "", fmt.Errorf("write the bed's files into %s: %w", disk, err)
	}
	return disk, nil
}

// exitCode is the exit status in err (-1 when it is not an exit).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// runQEMU runs argv under a hard timeout and makes sure the emulator dies on every exit path:
// its process group is killed when ctx or the timeout ends (command.Bound), when the test ends
// early (t.Cleanup), and when this test process dies, even by SIGKILL or go test's own timeout
// (Pdeathsig, sent when the thread that started it exits; that thread is locked for the start,
// and Go does not end an unlocked thread).
//
// A guest whose initramfs cannot find the bed's init runs a shell as pid 1 and would wait for
// the timeout: the console is watched for that and QEMU killed at once.
func runQEMU(ctx context.Context, t *testing.T, timeout time.Duration, console string, argv ...string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx, stuck := context.WithCancelCause(ctx)
	defer stuck(nil)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Second):
			}
			b, _ := os.ReadFile(console)
			if strings.Contains(string(b), noInit) {
				stuck(fmt.Errorf("the guest did not start %s: %s", bedInit, command.Tail(b, 600)))
				return
			}
		}
	}()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	command.Bound(cmd)
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	runtime.LockOSThread()
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }) // a no-op when it has exited: the group is gone
	err = cmd.Wait()
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			err = fmt.Errorf("%w (limit %s; %v)", cause, timeout, err)
		}
		return &command.Error{Argv: argv, Output: command.Tail([]byte(stderr.String()), command.TailBytes), Err: err}
	}
	return nil
}

// bedResult is what the guest printed between its markers.
type bedResult struct {
	report                 []string // the lines between V2BED-BEGIN and V2BED-END, and the facts
	mounts                 string
	left                   []string
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
			r.left = strings.Fields(strings.TrimPrefix(l, "V2BED-LEFT"))
			r.report = append(r.report, l)
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

// unexpected returns the groups of left that are not in mayStay.
func unexpected(left, mayStay []string) []string {
	var out []string
	for _, g := range left {
		if !slices.Contains(mayStay, g) {
			out = append(out, g)
		}
	}
	return out
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
	if !r.done || r.rc != 0 || len(r.left) != 0 || len(r.report) != 4 || !strings.Contains(r.mounts, "cgroup2") {
		t.Errorf("%+v", r)
	}
	r = parseConsole("V2BED-BEGIN\n--- FAIL\nV2BED-LEFT /sys/fs/cgroup/docker /sys/fs/cgroup/docker/0123 \nV2BED-RESULT rc=1\n")
	if r.rc != 1 || len(r.left) != 2 {
		t.Errorf("%+v", r)
	}
	if got := unexpected(r.left, beds[1].mayStay); !slices.Equal(got, []string{"/sys/fs/cgroup/docker/0123"}) {
		t.Errorf("unexpected = %v", got)
	}
	if r := parseConsole("Kernel panic\n"); r.done {
		t.Errorf("%+v", r)
	}
}
