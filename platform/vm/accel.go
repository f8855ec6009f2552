package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/boxbench/boxbench/images/vmimage"
	"github.com/boxbench/boxbench/internal/command"
)

// Accelerators.
const (
	AccelKVM = "kvm"
	AccelTCG = "tcg" // QEMU's software emulation: every result is labelled emulated
)

// trialTimeout bounds a trial boot. A kernel that boots reaches its root-mount panic in about
// 5 s under TCG on this kind of host; under KVM in well under a second.
const trialTimeout = 25 * time.Second

// trialMark is the console line that proves the guest kernel ran up to mounting its root file
// system (the trial gives it none, so it panics there and QEMU exits: -no-reboot).
const trialMark = "VFS: Unable to mount root fs"

// AccelChoice is the accelerator a box uses, and why.
type AccelChoice struct {
	Accel string `json:"accel"` // AccelKVM or AccelTCG
	CPU   string `json:"cpu"`   // the CPU model that booted under KVM ("host", "qemu64"); "max" under TCG
	// Why is the evidence: each KVM trial's outcome in its own words (the console's last lines,
	// or QEMU's error), or why KVM was not tried.
	Why string `json:"why"`
}

// Emulated says whether the guest's CPU is emulated in software.
func (a AccelChoice) Emulated() bool { return a.Accel == AccelTCG }

// trialCPUs are the CPU models tried under KVM, in order of preference.
var trialCPUs = []string{"host", "qemu64"}

var (
	accelMu     sync.Mutex
	accelResult *AccelChoice
)

// chooseAccel returns KVM when a guest kernel really boots under it, TCG otherwise (with the
// trials' own output as the reason). The answer is kept for the process and on disk beside the
// guest images, keyed by the boot, the QEMU binary and the guest kernel: a host does not change
// its virtualisation support without a reboot, and every trial that fails costs seconds.
func chooseAccel(ctx context.Context, img vmimage.Image, scratch string) AccelChoice {
	accelMu.Lock()
	defer accelMu.Unlock()
	if accelResult != nil {
		return *accelResult
	}
	key := accelKey(img)
	cache := filepath.Join(filepath.Dir(img.Dir), "accel-"+key+".json")
	var a AccelChoice
	if b, err := os.ReadFile(cache); err == nil && json.Unmarshal(b, &a) == nil && a.Accel != "" {
		accelResult = &a
		return a
	}
	a = trialKVM(ctx, img, scratch)
	if ctx.Err() == nil {
		b, _ := json.Marshal(a)
		_ = os.WriteFile(cache, b, 0o644)
		accelResult = &a
	}
	return a
}

// accelKey identifies what the trial's answer depends on: this boot of the host, the QEMU
// binary, the guest kernel (not the rest of the image: its rebuilds keep the answer).
func accelKey(img vmimage.Image) string {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	qemu, _ := exec.LookPath("qemu-system-x86_64")
	var qsize, qtime int64
	if fi, err := os.Stat(qemu); err == nil {
		qsize, qtime = fi.Size(), fi.ModTime().UnixNano()
	}
	var ksize int64
	if fi, err := os.Stat(img.Kernel); err == nil {
		ksize = fi.Size()
	}
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%d|%d|%s|%d", strings.TrimSpace(string(boot)), qemu, qsize, qtime, img.KernelVersion, ksize)))
	return hex.EncodeToString(h[:8])
}

// trialKVM boots img's kernel under KVM with no root disk, once per CPU model, each bounded by
// trialTimeout, and says whether one reached the root mount.
func trialKVM(ctx context.Context, img vmimage.Image, scratch string) AccelChoice {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return AccelChoice{Accel: AccelTCG, CPU: "max", Why: fmt.Sprintf("KVM is unavailable: %v", err)}
	}
	f.Close()
	var whys []string
	for _, cpu := range trialCPUs {
		ok, why := trialBoot(ctx, img, scratch, cpu)
		if ok {
			return AccelChoice{Accel: AccelKVM, CPU: cpu, Why: why}
		}
		whys = append(whys, why)
	}
	return AccelChoice{Accel: AccelTCG, CPU: "max", Why: strings.Join(whys, "; ")}
}

// trialBoot boots img's kernel under KVM with CPU model cpu.
func trialBoot(ctx context.Context, img vmimage.Image, scratch, cpu string) (bool, string) {
	dir, err := os.MkdirTemp(scratch, ".boxbench-kvm-trial-")
	if err != nil {
		return false, fmt.Sprintf("KVM trial not run: %v", err)
	}
	defer os.RemoveAll(dir)
	console := filepath.Join(dir, "console.log")
	tctx, cancel := context.WithTimeout(ctx, trialTimeout)
	defer cancel()
	start := time.Now()
	_, qerr := command.Run(tctx, "qemu-system-x86_64", "-accel", "kvm", "-cpu", cpu, "-m", "256", "-smp", "1",
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot", "-serial", "file:"+console,
		"-machine", "q35", "-kernel", img.Kernel, "-append", "console=ttyS0 earlyprintk=serial panic=-1 root=/dev/nonexistent")
	took := time.Since(start).Round(100 * time.Millisecond)
	log, _ := os.ReadFile(console)
	if strings.Contains(string(log), trialMark) {
		return true, fmt.Sprintf("a trial boot of kernel %s under KVM (-cpu %s) reached its root mount in %s", img.KernelVersion, cpu, took)
	}
	why := fmt.Sprintf("a trial boot of kernel %s under KVM (-cpu %s) did not reach its root mount", img.KernelVersion, cpu)
	if tctx.Err() != nil {
		why += fmt.Sprintf(" within %s", trialTimeout)
	} else if ce := (*command.Error)(nil); errors.As(qerr, &ce) {
		why += fmt.Sprintf(" (QEMU %v after %s: %s)", ce.Err, took, strings.Join(strings.Fields(command.Tail([]byte(ce.Output), 300)), " "))
	} else if qerr != nil {
		why += fmt.Sprintf(" (QEMU: %v)", qerr)
	}
	if last := strings.TrimSpace(command.Tail(log, 200)); last != "" {
		why += ", the console's last output: " + strings.Join(strings.Fields(last), " ")
	} else {
		why += ", the console stayed empty"
	}
	return false, why
}
