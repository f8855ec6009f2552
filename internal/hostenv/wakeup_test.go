package hostenv

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestMeasureWakeup(t *testing.T) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	w, err := MeasureWakeup(200)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(w.Describe())
	if w.SameCPU.Wall <= 0 || w.SameCPU.CPU <= 0 {
		t.Errorf("same-CPU round trip %+v: want wall and CPU time above 0", w.SameCPU)
	}
	if before.Count() > 1 && (w.CrossCPU.Wall <= 0 || w.CrossCPU.CPU <= 0) {
		t.Errorf("%d usable CPUs but no cross-CPU figures: %+v", before.Count(), w.CrossCPU)
	}
	// The probe pins threads of its own; none of that may stick to the rest of the process.
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("this thread's cpu mask changed from %v to %v", before, after)
	}
	env := WakeupFacts()
	for _, k := range []string{"wakeup_same_cpu_cpu_ns", "wakeup_same_cpu_wall_ns"} {
		if env[k] == "" || strings.HasPrefix(env[k], "-") || env[k] == "0" {
			t.Errorf("WakeupFacts()[%s] = %q", k, env[k])
		}
	}
}

func TestWakeupDescribe(t *testing.T) {
	w := WakeupCost{Rounds: 10, SameCPU: WakeupRound{Wall: 2700, CPU: 1400}, CrossCPU: WakeupRound{Wall: 66000, CPU: 24000}}
	got := w.Describe()
	for _, want := range []string{"same CPU 1.4 µs CPU (2.7 µs wall)", "across CPUs 24.0 µs CPU (66.0 µs wall)", "17×", "placement.clientPolicy"} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe() = %q, missing %q", got, want)
		}
	}
	w.CrossCPU = WakeupRound{Wall: 3000, CPU: 1600}
	if got := w.Describe(); strings.Contains(got, "clientPolicy") {
		t.Errorf("cheap cross-CPU wake-ups still advise a policy: %q", got)
	}
}

// The probe must not hang when the runtime stops the world while it runs: with raw system calls a
// side blocked in read kept its P, and a collection started meanwhile waited for it forever (this
// test then hung until go test's own -timeout ended the binary: a stopped world runs no timer of
// its own, so the select below only bounds a slow probe).
func TestWakeupProbeSurvivesCollections(t *testing.T) {
	stop := make(chan struct{})
	var collections sync.WaitGroup
	collections.Add(1)
	go func() {
		defer collections.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	done := make(chan error, 1)
	go func() {
		var err error
		for i := 0; i < 5 && err == nil; i++ {
			_, err = MeasureWakeup(2000)
		}
		done <- err
	}()
	select {
	case err := <-done:
		close(stop)
		collections.Wait()
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the wake-up probe hung while the runtime collected garbage")
	}
}
