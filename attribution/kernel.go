package attribution

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The values of results.FactInterrupts.
const (
	InterruptsAll     = "all"
	InterruptsIdle    = "idle"
	InterruptsUnknown = "unknown"
)

var interrupts = sync.OnceValue(func() string { return interruptsFrom(kernelConfig()) })

// Interrupts says what kernel.interrupts holds on this host's kernel (results.FactInterrupts):
// InterruptsAll where interrupt time is accounted apart from tasks, InterruptsIdle where
// tick-based accounting charges it to the task it interrupted, InterruptsUnknown when the
// kernel's configuration is not readable.
func Interrupts() string { return interrupts() }

func interruptsFrom(config io.Reader) string {
	if config == nil {
		return InterruptsUnknown
	}
	sc := bufio.NewScanner(config)
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case "CONFIG_IRQ_TIME_ACCOUNTING=y":
			return InterruptsAll
		case "# CONFIG_IRQ_TIME_ACCOUNTING is not set":
			return InterruptsIdle
		}
	}
	return InterruptsUnknown
}

// kernelConfig opens the running kernel's configuration: /proc/config.gz, else
// /boot/config-<release>; nil when neither is readable.
func kernelConfig() io.Reader {
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if z, err := gzip.NewReader(f); err == nil {
			if b, err := io.ReadAll(io.LimitReader(z, 8<<20)); err == nil {
				return strings.NewReader(string(b))
			}
		}
	}
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return nil
	}
	b, err := os.ReadFile("/boot/config-" + unix.ByteSliceToString(u.Release[:]))
	if err != nil {
		return nil
	}
	return strings.NewReader(string(b))
}
