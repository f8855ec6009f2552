// Package hostenv records the environment a measurement was taken in: kernel, cgroup layout,
// CPU, memory, the database build, and boxbench's own version. It is stored with every run.
//
// Layer (docs/architecture.md): OS plumbing — it talks to the host and imports only plumbing
// (internal/cgroup, internal/command) and a leaf (version); the spec and everything above may
// import it.
package hostenv

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/version"
)

// Capture describes the host. Values that cannot be read are left out, never invented.
func Capture() map[string]string {
	env := map[string]string{
		"boxbench_version": version.Version(),
		"boxbench_commit":  version.Commit(),
		"go_version":       runtime.Version(),
		"cgroup_mode":      cgroup.HostMode(),
		"cpus_online":      cgroup.OnlineCPUs(),
		"num_cpu":          strconv.Itoa(runtime.NumCPU()),
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		env["kernel"] = unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
		env["hostname"] = unix.ByteSliceToString(u.Nodename[:])
		env["arch"] = unix.ByteSliceToString(u.Machine[:])
	}
	if v := field("/proc/cpuinfo", "model name"); v != "" {
		env["cpu_model"] = v
	}
	if v := field("/proc/meminfo", "MemTotal"); v != "" {
		env["mem_total"] = v
	}
	if v := field("/etc/os-release", "PRETTY_NAME"); v != "" {
		env["os"] = strings.Trim(v, `"`)
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); err == nil {
		env["cpu_governor"] = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/intel_pstate/no_turbo"); err == nil {
		env["cpu_no_turbo"] = strings.TrimSpace(string(b))
	}
	return env
}

// DBMS records the native build of a database server: what versionCommand prints (the
// server's own version string) and the version of its Debian package pkg, which images must
// match. The caller names both (dbms.DBMS's VersionCommand and ServerPackage), so that this
// plumbing knows no database. A value that cannot be read is left out.
func DBMS(ctx context.Context, versionCommand []string, pkg string) map[string]string {
	env := map[string]string{}
	if out, err := command.Run(ctx, versionCommand...); err == nil {
		env["dbms_version"] = strings.TrimSpace(string(out))
	}
	if v, err := PackageVersion(ctx, pkg); err == nil {
		env["dbms_package"] = pkg + " " + v
	}
	return env
}

// PackageVersion returns the installed version of a Debian package.
func PackageVersion(ctx context.Context, pkg string) (string, error) {
	out, err := command.Run(ctx, "dpkg-query", "-W", "-f", "${Version}", pkg)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// field returns the value of the first "key: value" or "key=value" line of a file.
func field(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		for _, sep := range []string{":", "="} {
			if k, v, ok := strings.Cut(line, sep); ok && strings.TrimSpace(k) == key {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}
