package storage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// prepareLoop makes a blockdev box directory for real and returns it with its loop device.
func prepareLoop(t *testing.T, ctx context.Context) (string, *Dir, string) {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "losetup", "mkfs.ext4", "blkid", "unshare", "nsenter")
	dir := filepath.Join(testenv.WorkRoot(t), "box")
	d, err := Prepare(ctx, Blockdev, dir, Options{Size: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Release(context.Background()) })
	return dir, d, d.Facts["device"]
}

// startHolder starts argv, which ends in running sleep (the test's own process, killed when the test ends) and waits until
// its /proc/PID/mountinfo shows the filesystem on majmin, i.e. its mount namespace has a copy.
func startHolder(t *testing.T, ctx context.Context, majmin, cwd string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = cwd
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	mountinfo := fmt.Sprintf("/proc/%d/mountinfo", cmd.Process.Pid)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// Once the command runs (unshare has made the namespace and exec'd it), its
		// mountinfo is the namespace's.
		if b, _ := os.ReadFile(mountinfo); strings.Contains(string(b), " "+majmin+" ") && comm(cmd.Process.Pid) == "sleep" {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v never showed the filesystem %s in %s", argv, majmin, mountinfo)
		}
	}
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// spin keeps every CPU busy until the test ends: teardown on a loaded host, as in CI where
// every package's tests run at once.
func spin(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
}

func attached(dev string) bool {
	_, err := os.Stat(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file"))
	return err == nil
}

// TestReleaseWithCopiesInOtherNamespaces reproduces CI's "loop device … still in use after
// losetup -d": processes that cloned their mount namespace while the box's filesystem was
// mounted (unshare -m with private, slave — what `ip netns exec` makes — and unchanged
// propagation) keep a copy of the mount, and the host's unmount does not reach it. Release
// must unmount those copies of boxbench's own device and detach it, on a loaded host, without
// harming the holders.
func TestReleaseWithCopiesInOtherNamespaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, d, dev := prepareLoop(t, ctx)
	majmin, err := devNumber(dev)
	if err != nil {
		t.Fatal(err)
	}
	var holders []*exec.Cmd
	for _, prop := range []string{"private", "slave", "unchanged"} {
		holders = append(holders, startHolder(t, ctx, majmin, "/", "unshare", "--mount", "--propagation", prop, "sleep", "300"))
	}
	spin(t)
	if err := d.Release(ctx); err != nil {
		t.Fatalf("release with copies of the mount in other namespaces: %v", err)
	}
	if attached(dev) {
		t.Errorf("%s still attached after Release", dev)
	}
	for _, h := range holders {
		pid := h.Process.Pid
		if err := h.Process.Signal(syscall.Signal(0)); err != nil || comm(pid) != "sleep" {
			t.Errorf("holder %d did not survive the release: %v", pid, err)
		}
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid)); strings.Contains(string(b), " "+majmin+" ") {
			t.Errorf("holder %d still has the mount:\n%s", pid, b)
		}
	}
}

// TestWaitNamesHolders: a holder boxbench may not release (a process whose working directory
// is on the filesystem) makes the wait fail naming its pid and command, and once it is gone
// the device detaches.
func TestWaitNamesHolders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, d, dev := prepareLoop(t, ctx)
	majmin, _ := devNumber(dev)
	if !isOwnLoop(ctx, dev, dir) || isOwnLoop(ctx, dev, filepath.Join(dir, "other")) {
		t.Errorf("isOwnLoop(%s): want true under %s only", dev, dir)
	}
	cwd := startHolder(t, ctx, majmin, d.Path, "sleep", "300")
	copyNS := startHolder(t, ctx, majmin, "/", "unshare", "--mount", "sleep", "300")
	var names []string
	for _, h := range holdersOf(majmin, dir) {
		names = append(names, h.String())
	}
	for _, want := range []string{fmt.Sprintf("pid %d (sleep): cwd on it", cwd.Process.Pid),
		fmt.Sprintf("pid %d (sleep): mount %s in mount namespace", copyNS.Process.Pid, d.Path)} {
		if !strings.Contains(strings.Join(names, "\n"), want) {
			t.Errorf("holders %q lack %q", names, want)
		}
	}
	if _, err := command.Run(ctx, "umount", "-l", d.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := command.Run(ctx, "losetup", "-d", dev); err != nil {
		t.Fatal(err)
	}
	err := waitDetached(ctx, dev, dir, 3*time.Second)
	if want := fmt.Sprintf("held by pid %d (sleep): cwd on it", cwd.Process.Pid); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("wait with a working directory on the filesystem: %v, want %q", err, want)
	}
	_ = cwd.Process.Kill()
	_ = cwd.Wait()
	if err := waitDetached(ctx, dev, dir, 30*time.Second); err != nil {
		t.Fatalf("after the holder exited: %v", err)
	}
}
