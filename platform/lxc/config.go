package lxc

import (
	"github.com/boxbench/boxbench/platform/hostnet"

	"fmt"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
)

// commonConf is the distribution's common container configuration (capabilities, devices).
const commonConf = "/usr/share/lxc/config/common.conf"

// containerPath is the PATH of the server: the same as the Docker image's.
const containerPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// config is one container's LXC configuration, rendered to <lxcpath>/<name>/config (where
// lxc-stop, lxc-attach and lxc-info read it too: passed with -f they would not).
type config struct {
	Hostname  string         // lxc.uts.name, also in the box's /etc/hosts
	Rootfs    string         // "overlay:<lower>:<upper>"
	LogFile   string         // LXC's own log
	CgroupDir string         // the payload's group, e.g. "boxbench/<exp>/<run>" (the monitor's is beside it)
	Layout    cgroup.Version // the host's cgroup layout: its control files, under lxc.cgroup.* (v1) or lxc.cgroup2.*
	Init      []string       // the server's argv (pid 1 of the container)
	UID, GID  int            // the server's ids inside the root filesystem
	Cwd       string
	Halt      string   // the server's clean-shutdown signal, e.g. "SIGTERM"
	Mounts    []string // lxc.mount.entry values
	Net       *bridgeNet
	Limits    resource.Limits // CPU bandwidth, cpuset, memory, CPU weight: LXC's cgroup keys
}

// bridgeNet is a veth (host-side name Veth) on a bridge boxbench made, with static addresses.
type bridgeNet struct {
	hostnet.Bridge
	Veth string
}

// render writes the configuration. Every value is checked: a newline would start a new key, and
// lxc.init.cmd and mount entries are split on blanks.
func (c config) render() (string, error) {
	var b strings.Builder
	var errs []string
	kv := func(k, v string) {
		if strings.ContainsAny(v, "\n\r\x00") {
			errs = append(errs, fmt.Sprintf("%s: value %q holds a line break", k, v))
			return
		}
		fmt.Fprintf(&b, "%s = %s\n", k, v)
	}
	b.WriteString("# written by boxbench; one application container, removed with its box\n")
	kv("lxc.include", commonConf)
	if c.Hostname != "" {
		kv("lxc.uts.name", c.Hostname)
	}
	kv("lxc.rootfs.path", c.Rootfs)
	kv("lxc.apparmor.profile", "unconfined")
	kv("lxc.tty.max", "0")
	kv("lxc.console.path", "none")
	kv("lxc.log.file", c.LogFile)
	kv("lxc.log.level", "WARN")
	kv("lxc.cgroup.dir.container", c.CgroupDir)
	kv("lxc.cgroup.dir.monitor", c.CgroupDir+".monitor")
	for _, m := range c.Mounts {
		kv("lxc.mount.entry", m)
	}
	if c.Net == nil {
		kv("lxc.net.0.type", "none")
	} else {
		kv("lxc.net.0.type", "veth")
		kv("lxc.net.0.link", c.Net.Name)
		kv("lxc.net.0.flags", "up")
		kv("lxc.net.0.name", "eth0")
		kv("lxc.net.0.veth.pair", c.Net.Veth)
		kv("lxc.net.0.ipv4.address", c.Net.Addr)
		kv("lxc.net.0.ipv4.gateway", c.Net.Gateway)
	}
	for k, v := range c.limitKeys().all {
		kv(k, v)
	}
	kv("lxc.environment", "PATH="+containerPath)
	kv("lxc.environment", "LANG=C.UTF-8")
	cmd, err := initCmd(c.Init)
	if err != nil {
		errs = append(errs, err.Error())
	}
	kv("lxc.init.cmd", cmd)
	kv("lxc.init.uid", strconv.Itoa(c.UID))
	kv("lxc.init.gid", strconv.Itoa(c.GID))
	kv("lxc.init.cwd", c.Cwd)
	kv("lxc.signal.halt", c.Halt)
	if len(errs) > 0 {
		return "", fmt.Errorf("lxc config: %s", strings.Join(errs, "; "))
	}
	return b.String(), nil
}

// limitKeys are the cgroup keys of the CPU bandwidth, cpuset, memory and CPU weight, in a
// stable order (the I/O controls need the data device and are written after start): the
// layout's control files, each under LXC's key for that layout's filesystem type.
func (c config) limitKeys() orderedKV {
	var out orderedKV
	for _, s := range c.Layout.LimitFiles(c.Limits) {
		out.add("lxc."+c.Layout.FSType()+"."+s.File, s.Value)
	}
	return out
}

// orderedKV keeps keys in the order they were added; range over it with all().
type orderedKV []struct{ k, v string }

func (o *orderedKV) add(k, v string) { *o = append(*o, struct{ k, v string }{k, v}) }

// all yields the pairs in order.
func (o orderedKV) all(yield func(string, string) bool) {
	for _, p := range o {
		if !yield(p.k, p.v) {
			return
		}
	}
}

// initCmd renders argv for lxc.init.cmd, which LXC splits on blanks and unquotes (single or
// double quotes, no escapes, no shell). An argument holding both kinds of quote cannot be
// written and is refused.
func initCmd(argv []string) (string, error) {
	if len(argv) == 0 {
		return "", fmt.Errorf("lxc.init.cmd: no command")
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case a != "" && !strings.ContainsAny(a, " \t'\""):
			parts[i] = a
		case !strings.Contains(a, "'"):
			parts[i] = "'" + a + "'"
		case !strings.Contains(a, `"`):
			parts[i] = `"` + a + `"`
		default:
			return "", fmt.Errorf("lxc.init.cmd: argument %q holds both kinds of quote", a)
		}
	}
	return strings.Join(parts, " "), nil
}

// mountEntry is one fstab-style lxc.mount.entry; paths with blanks cannot be written.
func mountEntry(src, target, fstype, opts string) (string, error) {
	for _, f := range []string{src, target, opts} {
		if f == "" || strings.ContainsAny(f, " \t\n") {
			return "", fmt.Errorf("lxc.mount.entry: %q is empty or holds a blank (LXC cannot take it)", f)
		}
	}
	return fmt.Sprintf("%s %s %s %s 0 0", src, target, fstype, opts), nil
}
