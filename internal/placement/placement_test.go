package placement

import (
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// threadPolicies returns the policy of every thread of this process.
func threadPolicies(t *testing.T) map[int]string {
	t.Helper()
	got := map[int]string{}
	err := eachThread(func(tid int) error {
		p, err := Policy(tid)
		got[tid] = p
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// childPolicy is the policy number /proc shows for a child process started now.
func childPolicy(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("cat", "/proc/self/sched").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^policy\s*:\s*(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no policy line in /proc/self/sched:\n%s", out)
	}
	return string(m[1])
}

func TestSetPolicyIdleAndRestore(t *testing.T) {
	// An unprivileged thread may enter SCHED_IDLE but may leave it only within RLIMIT_NICE.
	testenv.NeedRoot(t)
	restore, err := SetPolicy(PolicyIdle)
	if err != nil {
		t.Fatal(err)
	}
	// Threads created inside the window (as the runtime does when the client needs them): more
	// goroutines locked to threads than there were threads, so at least one thread is new.
	before := threadPolicies(t)
	release, created := make(chan struct{}), make(chan int)
	for range len(before) + 1 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			created <- unix.Gettid()
			<-release
		}()
	}
	var newTids []int
	for range len(before) + 1 {
		if tid := <-created; before[tid] == "" {
			newTids = append(newTids, tid)
		}
	}
	if len(newTids) == 0 {
		t.Fatal("no thread was created inside the window: the test tests nothing")
	}
	for tid, p := range threadPolicies(t) {
		if p != PolicyIdle {
			t.Errorf("thread %d: policy %s inside the window, want idle", tid, p)
		}
	}
	if got := childPolicy(t); got != "5" {
		t.Errorf("a child started inside the window has policy %s, want 5 (SCHED_IDLE): sysbench would not be idle", got)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	pols := threadPolicies(t)
	for tid, p := range pols {
		if p != PolicyNormal {
			t.Errorf("thread %d: policy %s after restore, want normal", tid, p)
		}
	}
	for _, tid := range newTids {
		if pols[tid] != PolicyNormal {
			t.Errorf("thread %d, created in the window, has policy %q after restore", tid, pols[tid])
		}
	}
	close(release)
	if got := childPolicy(t); got != "0" {
		t.Errorf("a child started after restore has policy %s, want 0 (SCHED_OTHER)", got)
	}
}

func TestSetPolicyNormalChangesNothing(t *testing.T) {
	before := threadPolicies(t)
	restore, err := SetPolicy(PolicyNormal)
	if err != nil {
		t.Fatal(err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	for tid, p := range threadPolicies(t) {
		if b, ok := before[tid]; ok && b != p {
			t.Errorf("thread %d: policy %s became %s", tid, b, p)
		}
	}
}

func TestSetPolicyRejectsUnknown(t *testing.T) {
	_, err := SetPolicy("realtime")
	if err == nil {
		t.Fatal("SetPolicy(realtime): no error")
	}
	for _, w := range []string{"placement.clientPolicy", `"realtime"`, "normal", "idle"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}
}

func TestPinReportsTheKernelsMask(t *testing.T) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := eachThread(func(tid int) error { return unix.SchedSetaffinity(tid, &before) }); err != nil {
			t.Error(err)
		}
	}()
	got, err := Pin("0")
	if err != nil {
		t.Fatal(err)
	}
	if got != "0" {
		t.Errorf("Pin(0) = %q, want 0", got)
	}
	if _, err := Pin("0-x"); err == nil || !strings.Contains(err.Error(), "placement.client") {
		t.Errorf("Pin(0-x): %v, want an error naming placement.client", err)
	}
}
