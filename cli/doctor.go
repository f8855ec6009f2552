package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/blockdev"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/hostenv"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/runner"
)

// tools boxbench runs, and the Debian package that provides each.
var tools = []struct{ bin, pkg, why string }{
	{"setpriv", "util-linux", "run native servers as their system user"},
	{"losetup", "mount", "blockdev storage (loop devices)"},
	{"mkfs.ext4", "e2fsprogs", "blockdev storage (ext4)"},
	{"mkfs.xfs", "xfsprogs", "blockdev storage (xfs)"},
	{"debootstrap", "debootstrap", "build database images offline"},
	{"sysbench", "sysbench", "sysbench workloads"},
	{"fio", "fio", "fio workloads and neighbours"},
	{"stress-ng", "stress-ng", "CPU and memory neighbours"},
	{"chromium", "chromium", "the HTML report's rendering test"},
}

// typicalTool is how long one of tools' Debian packages takes to install on a 2-vCPU host.
const typicalTool = 20 * time.Second

func (a *app) doctorCmd() *cobra.Command {
	var cleanup bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Say what this host can do: engines, runtimes, cgroups, databases, missing tools",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Reading the host starts nothing; the trials and removals below are phases
			// of their own (stopping).
			defer onlyReading(cmd.Context(), "checking the host")()
			ps := builtin.Platforms(a.log)
			if cleanup {
				return a.cleanup(cmd.Context(), ps)
			}
			// The checks start short-lived containers and VMs (runtime and network trials),
			// each removed by the trial itself: a signal stops the checks, not the removals.
			done := stopping(cmd.Context(), "checking the host", "the current check has removed what it started")
			fs := diagnose(cmd.Context(), ps, a.workRoot)
			done()
			if cmd.Context().Err() != nil {
				return interrupted("doctor stopped before its checks were done; their findings are not printed")
			}
			printFindings(a.stdout, fs)
			writePrecision(a.stdout, lookAtHost(a.workRoot), nil)
			return nil
		},
	}
	cmd.Flags().BoolVar(&cleanup, "cleanup", false, "remove leftovers of crashed experiments (and only those: experiments whose lock under --work-root no process holds)")
	return cmd
}

func (a *app) cleanup(ctx context.Context, ps map[string]platform.Platform) error {
	if err := runner.CheckWorkRoot(a.workRoot); err != nil {
		return err
	}
	// Every platform's boxes first, then the shared work root (platform.CleanupAll). A signal
	// cancels ctx: the removal under way finishes (each has a teardown context of its own),
	// the rest is left for the next doctor --cleanup.
	done := stopping(ctx, "cleaning up", "the current removal is done")
	gone, err := platform.CleanupAll(ctx, ps, a.workRoot, crashedHere(a.workRoot))
	done()
	for _, g := range gone {
		who := g.Platform
		if who == "" {
			who = "work root"
		}
		fmt.Fprintf(a.stdout, "removed (%s): %s\n", who, g.What)
	}
	n := len(gone)
	fmt.Fprintf(a.stdout, "%d leftover(s) removed\n", n)
	if ctx.Err() != nil {
		return interrupted(fmt.Sprintf("cleanup stopped after %d removal(s); what is left is removed by the next boxbench doctor --cleanup", n))
	}
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("cleanup incomplete:\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))}
	}
	return nil
}

// crashedHere decides which experiments cleanup may touch: only one whose id is valid, whose
// lock file exists under this very work root, and whose lock can be taken (no live boxbench
// holds it). An experiment that never locked here — one running under another --work-root,
// whose containers carry the same labels — is left alone.
func crashedHere(workRoot string) func(id string) bool {
	crashed := runner.Crashed(workRoot)
	return func(id string) bool {
		if results.ValidExperimentID(id) != nil {
			return false
		}
		if fi, err := os.Lstat(filepath.Join(workRoot, "locks", id+".lock")); err != nil || !fi.Mode().IsRegular() {
			return false
		}
		return crashed(id)
	}
}

func diagnose(ctx context.Context, ps map[string]platform.Platform, workRoot string) []platform.Finding {
	env := hostenv.Capture()
	fs := []platform.Finding{
		{Area: "host", Name: "kernel", OK: true, Detail: env["kernel"]},
		{Area: "host", Name: "cgroups", OK: cgroup.HostMode() != "unavailable", Detail: cgroup.HostMode() + " (controllers on " + cgroup.HostVersion().String() + ")"},
		{Area: "host", Name: "cpus", OK: true, Detail: env["num_cpu"] + " online (" + env["cpus_online"] + "), " + env["cpu_model"]},
		{Area: "host", Name: "root", OK: os.Geteuid() == 0, Detail: "cgroups, mounts and loop devices need root", Fix: "run boxbench as root"},
	}
	fs = append(fs, ioWeightFinding(workRoot))
	fs = append(fs, v2ControllerFindings()...)
	fs = append(fs, hostFindings(ps)...)
	for _, t := range tools {
		_, err := exec.LookPath(t.bin)
		f := platform.Finding{Area: "tools", Name: t.bin, OK: err == nil, Detail: t.why}
		if err != nil {
			f.Fix = "apt-get install -y " + t.pkg
			f.Needs = []prereq.Need{{What: t.bin + " is not installed (" + t.why + ")", Command: f.Fix,
				Takes: typicalTool, Basis: prereq.Typical}}
		}
		fs = append(fs, f)
	}
	for _, d := range databases.DBMSs() {
		name := d.Name()
		f := platform.Finding{Area: "dbms", Name: name}
		if err := dbms.Missing(d); err != nil {
			fix := "apt-get install -y " + strings.Join(d.Packages(), " ")
			if len(dbms.BuiltFiles(d)) > 0 {
				fix = "make setup STEPS=" + name + "; " + fix
			}
			f.Lacks(err, fix)
			f.Detail = strings.ReplaceAll(f.Detail, "\n", "; ")
		} else {
			f.OK = true
			env := hostenv.DBMS(ctx, d.VersionCommand(), d.ServerPackage())
			f.Detail = env["dbms_package"]
			if len(dbms.BuiltFiles(d)) > 0 { // not only a Debian package: say which build
				f.Detail = env["dbms_version"] + "; " + env["dbms_package"]
			}
		}
		fs = append(fs, f)
	}
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if d := ps[n].Info().Diagnoser; d != nil {
			fs = append(fs, d.Diagnose(ctx, databases.DBMSs())...)
		} else {
			fs = append(fs, platform.Finding{Area: n, Name: "platform", OK: true, Detail: "available"})
		}
	}
	return fs
}

// hostFindings are the platforms' needs of this host (platform.HostChecker), by platform name,
// each (area, name) once.
func hostFindings(ps map[string]platform.Platform) []platform.Finding {
	var fs []platform.Finding
	seen := map[[2]string]bool{}
	for _, n := range slices.Sorted(maps.Keys(ps)) {
		if h := ps[n].Info().Host; h != nil {
			for _, f := range h.HostFindings() {
				if k := [2]string{f.Area, f.Name}; !seen[k] {
					seen[k] = true
					fs = append(fs, f)
				}
			}
		}
	}
	return fs
}

// ioWeightFinding: proportional io shares need the BFQ scheduler on the device that holds the
// data (blkio.bfq.weight on v1, io.weight on v2); with another scheduler a weight is ignored.
func ioWeightFinding(workRoot string) platform.Finding {
	f := platform.Finding{Area: "host", Name: "io weights"}
	dir := workRoot
	if _, err := os.Stat(dir); err != nil {
		dir = "/var/tmp"
	}
	dev, err := blockdev.Resolve(dir)
	if err != nil {
		f.Detail = "cannot tell which device holds " + dir + ": " + err.Error()
		return f
	}
	mm := cgroup.DeviceOf(dev.Major, dev.Minor)
	sched := cgroup.Scheduler(mm)
	if sched == "bfq" {
		f.OK, f.Detail = true, fmt.Sprintf("%s (%s) holding %s is scheduled by bfq: io weights are enforced", dev.Name, mm, dir)
		return f
	}
	f.Detail = fmt.Sprintf("%s (%s) holding %s is scheduled by %q: io weights are written but not enforced (cpu weights and io max limits still are)", dev.Name, mm, dir, sched)
	f.Fix = fmt.Sprintf("echo bfq > /sys/block/%s/queue/scheduler (host-wide: affects everything on that disk)", dev.Name)
	return f
}

func printFindings(w io.Writer, fs []platform.Finding) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	area := ""
	for _, f := range fs {
		if f.Area != area {
			area = f.Area
			fmt.Fprintf(tw, "%s\t\t\n", strings.ToUpper(area))
		}
		mark := "ok  "
		if !f.OK {
			mark = "NO  "
		}
		line := fmt.Sprintf("  %s%s\t%s", mark, f.Name, strings.ReplaceAll(f.Detail, "\n", " "))
		if !f.OK && f.Fix != "" {
			line += "\t→ " + fixOf(f)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	printNeeds(w, fs)
}

// fixOf is a finding's fix, each prerequisite's command with its estimate.
func fixOf(f platform.Finding) string {
	if len(f.Needs) == 0 {
		return f.Fix
	}
	var parts []string
	for _, n := range f.Needs {
		p := n.Command
		if e := n.Estimate(); e != "" {
			p += " (" + e + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// printNeeds ends doctor with its prerequisites once each: what is missing that one command
// makes, the command and its estimate.
func printNeeds(w io.Writer, fs []platform.Finding) {
	var lists [][]prereq.Need
	for _, f := range fs {
		if !f.OK {
			lists = append(lists, f.Needs)
		}
	}
	needs := prereq.Merge(lists...)
	if len(needs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nprerequisites (%d; each makes what the lines above lack):\n", len(needs))
	for _, n := range needs {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// v2ControllerFindings reports, on a host whose layout delegates controllers (cgroup v2), each
// controller boxbench delegates down its /boxbench subtree: offered by the root or not (then the
// limits or telemetry that need it cannot work, and creating a group is refused naming it).
func v2ControllerFindings() []platform.Finding {
	if !cgroup.HostVersion().Delegates() {
		return nil
	}
	missing, err := cgroup.MissingControllers()
	if err != nil {
		return []platform.Finding{{Area: "cgroup", Name: "v2 controllers", Detail: err.Error()}}
	}
	var fs []platform.Finding
	for _, c := range cgroup.Controllers {
		f := platform.Finding{Area: "cgroup", Name: "v2 " + c, OK: true,
			Detail: "offered by the root; boxbench enables it in cgroup.subtree_control down /boxbench"}
		if slices.Contains(missing, c) {
			f.OK, f.Detail = false, "not offered by the root (cgroup.controllers): the kernel lacks it or a v1 hierarchy holds it"
			f.Fix = "boot a kernel with the controller and without it bound to cgroup v1"
		}
		fs = append(fs, f)
	}
	return fs
}
