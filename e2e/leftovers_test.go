package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostnet"
	boxspec "github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/platformtest"
)

// The package's one leftover check. Everything is scoped to the experiments run under the
// test's own work root (their locks name them): the package's tests run in parallel, and other
// packages' tests beside them, so nothing is looked for by a name prefix that another test's
// live experiment could share.

// assertClean: of every experiment run in the env, nothing is left (leftovers), and nothing is
// left under the work root but the locks and the seed cache.
func (e *env) assertClean(t *testing.T) {
	t.Helper()
	for _, exp := range e.experiments() {
		for _, l := range e.leftovers(exp) {
			t.Errorf("left of %s: %s", exp, l)
		}
	}
	ents, _ := os.ReadDir(e.work)
	for _, ent := range ents {
		if n := ent.Name(); n != "locks" && n != "seeds" {
			t.Errorf("left under the work root: %s", n)
		}
	}
}

// leftovers lists what experiment exp left anywhere boxbench puts things: its cgroups (in any
// hierarchy) and their processes, mounts under the work root and loop devices over files in
// it, its work directory, its runs' socket directories and host interfaces (bridges, veths,
// taps), what every platform's own places hold of it (platform.LeftoverLister: an engine's
// containers, volumes, networks and services, a cluster's objects, LXC's lock directories),
// and the objects of it in the multi-node clusters the env made.
func (e *env) leftovers(exp string) []string {
	left := platformtest.HostLeftovers(e.work, exp)
	mounts, _ := os.ReadFile("/proc/self/mounts")
	if bytes.Contains(mounts, []byte(" "+e.work+"/")) { // the work root itself may be the test's tmpfs
		left = append(left, "a mount under "+e.work)
	}
	if out, err := exec.Command("losetup", "--list", "--noheadings", "--output", "BACK-FILE").Output(); err == nil && bytes.Contains(out, []byte(e.work+"/")) {
		left = append(left, "loop device "+strings.TrimSpace(string(out)))
	}
	for _, run := range runNames() {
		h := sha256.Sum256([]byte(filepath.Join(e.work, exp, run)))
		if dir := filepath.Join(os.TempDir(), "boxbench-"+hex.EncodeToString(h[:6])); exists(dir) {
			left = append(left, "socket directory "+dir+" of "+run)
		}
		for _, p := range []string{hostnet.PrefixBridge, hostnet.PrefixVeth, hostnet.PrefixTap} {
			if n := hostnet.Name(p, exp, run); exists(filepath.Join("/sys/class/net", n)) {
				left = append(left, "interface "+n+" of "+run)
			}
		}
	}
	left = append(left, e.platformLeftovers(exp)...)
	for _, m := range e.kubeMulti {
		left = append(left, clusterObjects(m.kubectl(), m.kubeconfig(), exp)...)
	}
	return left
}

// runNames are the run (and cluster node) names the tests' experiments can have.
func runNames() []string {
	var names []string
	for i := 1; i <= 12; i++ {
		r := fmt.Sprintf("r%04d", i)
		names = append(names, r)
		for n := 1; n <= 3; n++ {
			names = append(names, fmt.Sprintf("%s-n%d", r, n))
		}
	}
	return names
}

// platformLeftovers asks every platform of the build what its own places hold of exp
// (platform.LeftoverLister), the platforms made as boxbench makes them for the env (its
// engine, its spec's sections). Where a platform could not look counts only for one the spec
// runs on: a platform the experiment never used (an engine that does not answer, no cluster)
// had nothing to leave, and is given a short while only (the objects swarm cells make on the
// engine are the docker platform's to list, so every platform is asked).
func (e *env) platformLeftovers(exp string) []string {
	ps, used, done := e.platforms()
	defer done()
	var left []string
	for _, n := range slices.Sorted(maps.Keys(ps)) {
		l := ps[n].Info().Leftovers
		if l == nil {
			continue
		}
		limit := 10 * time.Second
		if used[n] {
			limit = time.Minute
		}
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		found, err := l.Leftovers(ctx, e.work, exp)
		cancel()
		left = append(left, found...)
		if err != nil && used[n] {
			left = append(left, n+": "+err.Error())
		}
	}
	return left
}

// platforms are the build's platforms on the env's engine, configured with the env's spec as
// `boxbench run` configures them, the platforms the spec's cells run on (none when the spec
// does not parse: then nothing ran), and what closes the engine's client.
func (e *env) platforms() (map[string]platform.Platform, map[string]bool, func()) {
	var engine client.APIClient
	if e.dockerHost != "" {
		if c, err := client.NewClientWithOpts(client.WithHost(e.dockerHost), client.WithAPIVersionNegotiation()); err == nil {
			engine = image.Bound(c)
		}
	} else if c, err := image.Connect(); err == nil {
		engine = c
	}
	done := func() {
		if engine != nil {
			engine.Close()
		}
	}
	ps := builtin.PlatformsOn(engine, nil)
	used := map[string]bool{}
	data, err := os.ReadFile(e.specFile)
	if err != nil {
		return ps, used, done
	}
	sp, err := boxspec.Parse(data, e.specFile, builtin.Vocabulary(ps))
	if err != nil {
		return ps, used, done
	}
	builtin.Configure(ps, sp)
	names := sp.ValuesOf("platform")
	if names == nil {
		names = []string{sp.DefaultPlatform()}
	}
	for _, n := range names {
		used[n] = true
	}
	return ps, used, done
}

// kubeconfig is the local cluster's (scripts/kube-local.sh's contract).
const kubeconfig = "/var/lib/boxbench/kube/admin.kubeconfig"

// kubeObjects lists the local cluster's objects (pods, services, claims, volumes, namespaces)
// labelled boxbench=1 of experiment exp.
func kubeObjects(exp string) []string {
	return clusterObjects("/run/boxbench/kube/bin/kubectl", kubeconfig, exp)
}

// clusterObjects lists the objects of experiment exp in the cluster of kubeconfig.
func clusterObjects(kubectl, kubeconfig, exp string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "get",
		"pods,services,pvc,pv,namespaces", "-A", "-l", "boxbench=1", "-o", "json").Output()
	if err != nil {
		return []string{"list the cluster's labelled objects: " + err.Error()}
	}
	var list struct {
		Items []struct {
			Kind     string
			Metadata struct {
				Name, Namespace string
				Annotations     map[string]string
			}
		}
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return []string{"the cluster's objects: " + err.Error()}
	}
	var out []string
	for _, o := range list.Items {
		if o.Metadata.Annotations["boxbench/experiment"] == exp {
			out = append(out, o.Kind+" "+o.Metadata.Namespace+"/"+o.Metadata.Name)
		}
	}
	return out
}

// assertGone: none of pids (a server's, a load generator's) outlived its run (a zombie has).
func assertGone(t *testing.T, pids []int, what string) {
	t.Helper()
	for _, pid := range pids {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("%s %d outlived its run", what, pid)
		}
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// serverPids lists the processes in the cgroups of experiment exp's runs (the measured
// servers: the experiments have no neighbours), found from the cgroup tree. LXC's monitor
// groups (<run>.monitor) hold lxc-start, not the server, and are left out.
func serverPids(exp string) []int {
	var files []string
	for _, pat := range []string{"/sys/fs/cgroup/memory/boxbench/" + exp + "/*", "/sys/fs/cgroup/boxbench/" + exp + "/*"} {
		m, _ := filepath.Glob(pat)
		for _, dir := range m {
			if strings.HasSuffix(dir, ".monitor") {
				continue
			}
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "cgroup.procs" {
					files = append(files, p)
				}
				return nil
			})
		}
	}
	return readProcs(files)
}

// readProcs reads the pids listed in cgroup.procs files.
func readProcs(files []string) []int {
	var pids []int
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// dockerServerPids finds the server containers of experiment exp by their labels, then their
// processes from each container's cgroup (the memory hierarchy on v1, the unified one on v2,
// as /proc/<pid>/cgroup of its init names it), and those cgroups' directories.
func (e *env) dockerServerPids(exp string) ([]int, []string) {
	out, err := e.docker("ps", "-q", "--filter", "label=boxbench.experiment="+exp, "--filter", "label=boxbench.role=server").Output()
	if err != nil {
		return nil, nil
	}
	var pids []int
	var groups []string
	for _, id := range strings.Fields(string(out)) {
		b, err := e.docker("inspect", "--format", "{{.State.Pid}}", id).Output()
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == 0 {
			continue
		}
		g := cgroupDir(pid)
		if g == "" || !strings.Contains(filepath.Base(g), id) {
			// The container's init exited meanwhile and its pid names another process (or
			// none): only the container's own group is ever read, and its pids killed.
			continue
		}
		groups = append(groups, g)
		pids = append(pids, readProcs([]string{filepath.Join(g, "cgroup.procs")})...)
	}
	return pids, groups
}

// dockerContainers counts exp's server containers (running only, unless all) of run ("" any).
func (e *env) dockerContainers(exp, run string, all bool) int {
	args := []string{"ps", "-q", "--filter", "label=boxbench.experiment=" + exp, "--filter", "label=boxbench.role=server"}
	if run != "" {
		args = append(args, "--filter", "label=boxbench.run="+run)
	}
	if all {
		args = append(args, "-a")
	}
	out, _ := e.docker(args...).Output()
	return len(strings.Fields(string(out)))
}

// cgroupDir is the directory of pid's cgroup: the memory controller's on v1, the unified on v2.
func cgroupDir(pid int) string {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.SplitN(sc.Text(), ":", 3)
		if len(p) != 3 {
			continue
		}
		if p[0] == "0" && p[1] == "" && !exists("/sys/fs/cgroup/memory") {
			return filepath.Join("/sys/fs/cgroup", p[2])
		}
		for _, c := range strings.Split(p[1], ",") {
			if c == "memory" {
				return filepath.Join("/sys/fs/cgroup/memory", p[2])
			}
		}
	}
	return ""
}
