package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/spec"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSignalsTearDown sends real SIGHUP and SIGQUIT to the test process: each cancels the
// context like SIGINT does (teardown), instead of ending the process.
func TestSignalsTearDown(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			sigs := make(chan os.Signal, 3)
			signal.Notify(sigs, teardownSignals...)
			defer signal.Stop(sigs)
			var out lockedBuffer
			exited := make(chan int, 1)
			ctx, stop := handleSignals(context.Background(), sigs, &out, time.Hour, func(c int) { exited <- c })
			defer stop()
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatalf("%v did not cancel the context", sig)
			}
			if !strings.Contains(out.String(), "tearing down the current run") {
				t.Errorf("message: %q", out.String())
			}
			select {
			case c := <-exited:
				t.Errorf("exit(%d) after one signal", c)
			default:
			}
		})
	}
}

// TestSecondSignalForcesExit: after a second signal, exit(130) follows the grace, with a
// message naming doctor --cleanup; a third signal exits at once.
func TestSecondSignalForcesExit(t *testing.T) {
	for _, third := range []bool{false, true} {
		sigs := make(chan os.Signal, 3)
		var out lockedBuffer
		exited := make(chan int, 1)
		grace := 200 * time.Millisecond
		if third {
			grace = time.Hour
		}
		ctx, stop := handleSignals(context.Background(), sigs, &out, grace, func(c int) { exited <- c })
		sigs <- syscall.SIGHUP
		<-ctx.Done()
		sigs <- syscall.SIGINT
		if third {
			sigs <- syscall.SIGINT
		}
		select {
		case c := <-exited:
			if c != ExitInterrupted {
				t.Errorf("exit code %d, want %d", c, ExitInterrupted)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no forced exit")
		}
		if !strings.Contains(out.String(), "boxbench doctor --cleanup") {
			t.Errorf("message: %q", out.String())
		}
		stop()
	}
}

// TestStopEndsTheWatch: once the command returned, a late signal does nothing.
func TestStopEndsTheWatch(t *testing.T) {
	sigs := make(chan os.Signal, 3)
	exited := make(chan int, 1)
	_, stop := handleSignals(context.Background(), sigs, &lockedBuffer{}, time.Millisecond, func(c int) { exited <- c })
	stop()
	stop()
	sigs <- syscall.SIGHUP
	sigs <- syscall.SIGHUP
	time.Sleep(50 * time.Millisecond)
	select {
	case c := <-exited:
		t.Errorf("exit(%d) after stop", c)
	default:
	}
}

// TestSignalWhileReadingTheSpec: while the spec is read, validated and planned nothing has been
// started, so the first signal exits at once (130) instead of announcing a teardown and
// carrying on; once that phase ends, a signal tears down as before.
func TestSignalWhileReadingTheSpec(t *testing.T) {
	sigs := make(chan os.Signal, 3)
	var out lockedBuffer
	exited := make(chan int, 1)
	ctx, stop := handleSignals(context.Background(), sigs, &out, time.Hour, func(c int) { exited <- c })
	defer stop()
	started := nothingStarted(ctx)
	sigs <- syscall.SIGTERM
	select {
	case c := <-exited:
		if c != ExitInterrupted {
			t.Errorf("exit(%d), want %d", c, ExitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a signal while reading the spec did not end boxbench")
	}
	if s := out.String(); strings.Contains(s, "tearing down") || !strings.Contains(s, "nothing had been started") {
		t.Errorf("message: %q", s)
	}
	started()

	sigs2 := make(chan os.Signal, 3)
	var out2 lockedBuffer
	ctx2, stop2 := handleSignals(context.Background(), sigs2, &out2, time.Hour, func(c int) { exited <- c })
	defer stop2()
	nothingStarted(ctx2)() // the phase began and ended: the runner is at work
	sigs2 <- syscall.SIGTERM
	<-ctx2.Done()
	if !strings.Contains(out2.String(), "tearing down the current run") {
		t.Errorf("after the spec was read: %q", out2.String())
	}
}

// TestLoadSpecRefusesNonFiles: a spec larger than 1 MiB, a device and a FIFO are refused at
// once with ExitUsage, before parsing.
func TestLoadSpecRefusesNonFiles(t *testing.T) {
	dir := t.TempDir()
	big := dir + "/big.yaml"
	if err := os.WriteFile(big, make([]byte, spec.MaxSpecBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := dir + "/fifo.yaml"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{big: "larger than", "/dev/zero": "character device", fifo: "FIFO"} {
		_, _, err := loadSpec(path, nil)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want exit %d saying %q, got %v", path, ExitUsage, want, err)
		}
	}
}

// TestSignalWhileStopping: in a phase that started something (doctor's trials, cleanup), even
// one entered inside a reading phase, the first signal cancels the context, says what is being
// finished, and does not exit; interrupted is exit status 130.
func TestSignalWhileStopping(t *testing.T) {
	sigs := make(chan os.Signal, 3)
	var out lockedBuffer
	exited := make(chan int, 1)
	ctx, stop := handleSignals(context.Background(), sigs, &out, time.Hour, func(c int) { exited <- c })
	defer stop()
	reading := onlyReading(ctx, "reading the results")
	done := stopping(ctx, "cleaning up", "the current removal is done")
	done()
	done = stopping(ctx, "cleaning up", "the current removal is done")
	sigs <- syscall.SIGINT
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the signal did not cancel the context")
	}
	if s := out.String(); !strings.Contains(s, "received interrupt while cleaning up: stopping once the current removal is done") || strings.Contains(s, "tearing down") {
		t.Errorf("message: %q", s)
	}
	select {
	case c := <-exited:
		t.Errorf("exit(%d) at the first signal of a phase that must finish", c)
	default:
	}
	done()
	reading()
	if err := interrupted("cleanup stopped"); err.Error() != "interrupted: cleanup stopped" {
		t.Errorf("interrupted: %v", err)
	}
	var ee *ExitError
	if !errors.As(interrupted("x"), &ee) || ee.Code != ExitInterrupted {
		t.Errorf("interrupted is not exit %d", ExitInterrupted)
	}
}
