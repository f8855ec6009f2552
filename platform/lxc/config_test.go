package lxc

import (
	"strings"
	"testing"

	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform/hostnet"
)

func TestRenderV1AndV2(t *testing.T) {
	c := config{Rootfs: "overlay:/t/rootfs:/w/lxc/bb-r1/upper", LogFile: "/w/lxc.log", CgroupDir: "boxbench/e/r1",
		Init: []string{"/usr/bin/redis-server", "--save", "", "--dir", "/boxbench/data/db"}, UID: 100, GID: 102,
		Cwd: "/", Halt: "SIGTERM", Mounts: []string{"/w/data boxbench/data none bind,create=dir 0 0"},
		Net:    &bridgeNet{Bridge: hostnet.Bridge{Name: "bbx01020304", Addr: "10.213.7.2/24", Gateway: "10.213.7.1"}, Veth: "bbv01020304"},
		Limits: resource.Limits{CPUs: 0.5, Cpuset: "1", MemoryBytes: 512 << 20, CPUWeight: 200}}
	out, err := c.render()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"lxc.cgroup.dir.container = boxbench/e/r1\n", "lxc.cgroup.dir.monitor = boxbench/e/r1.monitor\n",
		"lxc.cgroup.cpu.cfs_quota_us = 50000\n", "lxc.cgroup.cpuset.cpus = 1\n",
		"lxc.cgroup.memory.limit_in_bytes = 536870912\n", "lxc.cgroup.cpu.shares = 2048\n",
		"lxc.init.cmd = /usr/bin/redis-server --save '' --dir /boxbench/data/db\n",
		"lxc.net.0.veth.pair = bbv01020304\n", "lxc.net.0.ipv4.address = 10.213.7.2/24\n",
		"lxc.init.uid = 100\n", "lxc.signal.halt = SIGTERM\n", "lxc.tty.max = 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	c.Layout = cgroup.V2
	out, _ = c.render()
	for _, want := range []string{"lxc.cgroup2.cpu.max = 50000 100000\n", "lxc.cgroup2.memory.max = 536870912\n", "lxc.cgroup2.cpu.weight = 200\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("v2: missing %q", want)
		}
	}
	if strings.Contains(out, "lxc.cgroup.cpu") {
		t.Error("v2 config holds v1 keys")
	}
}

// TestRenderRefuses: a line break would start a new key; both quote kinds cannot be written.
func TestRenderRefuses(t *testing.T) {
	for _, c := range []config{
		{Init: []string{"x"}, Cwd: "/\nlxc.hook.pre-start = /bin/evil"},
		{Init: []string{`a'b"c`}},
		{Init: nil},
	} {
		if _, err := c.render(); err == nil {
			t.Errorf("rendered %+v", c)
		}
	}
	if _, err := mountEntry("/a b", "x", "none", "bind"); err == nil {
		t.Error("a mount source with a blank was accepted")
	}
}
