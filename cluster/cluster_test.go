package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/etcd"
	"github.com/boxbench/boxbench/dbms/mariadb"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/testkit/testenv"
)

func TestCpusets(t *testing.T) {
	for _, tc := range []struct {
		set    string
		n      int
		host   []int
		want   []string
		shared bool
	}{
		{"", 3, []int{0, 1}, []string{"", "", ""}, true},
		{"1", 2, []int{0, 1}, []string{"1", "1"}, true},
		{"", 2, []int{0, 1}, []string{"0", "1"}, false},
		{"2-7", 3, []int{0, 1, 2, 3, 4, 5, 6, 7}, []string{"2-3", "4-5", "6-7"}, false},
	} {
		got, how, shared := cpusets(tc.set, tc.n, tc.host)
		if !reflect.DeepEqual(got, tc.want) || shared != tc.shared || how == "" {
			t.Errorf("cpusets(%q, %d, %v) = %v %q %v, want %v shared=%v", tc.set, tc.n, tc.host, got, how, shared, tc.want, tc.shared)
		}
	}
}

func TestCheck(t *testing.T) {
	p := native.New()
	var etcd dbms.DBMS = etcd.Etcd{}
	var pg dbms.DBMS = mariadb.MariaDB{}
	for _, tc := range []struct {
		d       dbms.DBMS
		network string
		nodes   int
		want    string
	}{
		{etcd, "host", 3, ""},
		{dbms.WithPassword(etcd, "x"), "host", 3, ""},
		{etcd, "host", 4, "even number"},
		{etcd, "unix", 3, "network unix"},
		{pg, "host", 2, "no topology"},
	} {
		err := Check(p, tc.d, tc.network, dbms.Topology{Nodes: tc.nodes})
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%s, %s, %d) = %v, want %q", tc.d.Name(), tc.network, tc.nodes, err, tc.want)
		}
	}
}

// TestFailedJoin starts a 3-member etcd cluster whose third member is given a client port that
// something else already listens on: the provision fails naming n3 with n3's own log, and the
// two members that did start are torn down (no process, cgroup, container or directory left).
func TestFailedJoin(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "etcd")
	cases := map[string]func(t *testing.T) platform.Platform{
		"native": func(t *testing.T) platform.Platform { return native.New() },
		"docker": func(t *testing.T) platform.Platform {
			testenv.NeedDocker(t)
			engine, err := image.Connect()
			if err != nil {
				t.Fatal(err)
			}
			return docker.New(engine, nil)
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			p := mk(t)
			held, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			taken := held.Addr().(*net.TCPAddr).Port
			// place asks for ports node by node, in listener-name order (client, peer): the
			// fifth is n3's client port.
			var calls atomic.Int32
			reservePort = func() (int, error) {
				if calls.Add(1) == 5 {
					return taken, nil
				}
				return platform.FreePort()
			}
			defer func() { reservePort = platform.FreePort }()
			exp := fmt.Sprintf("test-cluster-%s-%d", name, os.Getpid())
			work := testenv.WorkRoot(t)
			var d dbms.DBMS = etcd.Etcd{}
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			b, err := Provision(ctx, p, platform.Request{Experiment: exp, Run: "r0001",
				WorkDir: filepath.Join(work, exp, "r0001"), DBMS: dbms.WithPassword(d, dbms.NewPassword()),
				Choice:    platform.Choice{Storage: "bind", Network: "host"},
				Resources: resource.Limits{CPUs: 0.5, MemoryBytes: 256 << 20}}, dbms.Topology{Nodes: 3})
			if err == nil {
				_ = b.Teardown(ctx)
				t.Fatal("a member on a taken port joined")
			}
			msg := err.Error()
			if !strings.Contains(msg, "node n3") || !strings.Contains(msg, "address already in use") {
				t.Errorf("the error does not name n3 and its log's reason:\n%s", msg)
			}
			if strings.Contains(msg, "node n1 did not") || strings.Contains(msg, "node n2 did not") {
				t.Errorf("the error blames a member that was fine:\n%s", msg)
			}
			t.Logf("failed join: %s", msg)
			assertNothingLeft(t, exp, work)
		})
	}
}

// assertNothingLeft: no cgroup, labelled container or network, or work directory of exp.
func assertNothingLeft(t *testing.T, exp, work string) {
	t.Helper()
	dir := filepath.Join(cgroup.Root, "memory", "boxbench", exp)
	if runs, _ := os.ReadDir(dir); len(runs) > 0 {
		t.Errorf("cgroups left under %s: %v", dir, runs)
	}
	_ = cgroup.At("/boxbench/" + exp).Remove()
	for _, what := range [][]string{{"ps", "-a"}, {"network", "ls"}} {
		out, err := exec.Command("docker", append(what, "--filter", "label=boxbench.experiment="+exp, "--format", "{{.Names}}")...).Output()
		if err == nil && strings.TrimSpace(string(out)) != "" {
			t.Errorf("docker %s left: %s", what[0], out)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(work, exp)); len(ents) > 0 {
		t.Errorf("work directories left: %v", ents)
	}
}

// TestMerge: a doubt of several nodes is one warning naming every node it concerns.
func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		names, msgs []string
		want        string
	}{
		{[]string{"n3"}, []string{"io weight not enforced"}, "node n3: io weight not enforced"},
		{[]string{"n1", "n2", "n3"}, []string{"x", "x", "x"}, "nodes n1, n2, n3: x"},
		{[]string{"n1", "n3"}, []string{"x", "y"}, "node n1: x; node n3: y"},
	} {
		if got := merge(tc.names, tc.msgs); got != tc.want {
			t.Errorf("merge(%v, %v) = %q, want %q", tc.names, tc.msgs, got, tc.want)
		}
	}
}

// answerLate is a cluster that is not yet ready for its first n questions, and records how
// long each question was given.
type answerLate struct {
	dbms.Clustered
	n     int
	given []time.Duration
}

func (a *answerLate) ClusterReady(ctx context.Context, _ dbms.Topology, _ []driver.Endpoint, _ driver.Credentials) (map[string]string, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		return nil, fmt.Errorf("a question without a deadline")
	}
	a.given = append(a.given, time.Until(dl))
	if len(a.given) <= a.n {
		return nil, fmt.Errorf("not yet")
	}
	return map[string]string{"ready": "yes"}, nil
}

// TestWaitClusterProbes: each question after an answer of not yet is given half as long again
// as the one before, from firstProbe up to maxProbe, so that a healthy cluster that answers
// slowly is eventually given the time to answer.
func TestWaitClusterProbes(t *testing.T) {
	a := &answerLate{n: 6}
	facts, err := waitCluster(context.Background(), a, dbms.Topology{Nodes: 3}, nil, driver.Credentials{})
	if err != nil || facts["ready"] != "yes" {
		t.Fatalf("waitCluster: %v %v", facts, err)
	}
	if len(a.given) != 7 {
		t.Fatalf("%d questions, want 7", len(a.given))
	}
	// What is left of a question's time when it arrives is at most its timeout, and (the call
	// is immediate) more than the one before's: no bound on the host's speed.
	var before time.Duration
	want := firstProbe
	for i, g := range a.given {
		if g > want || g <= before {
			t.Errorf("question %d was given %s, want more than %s, at most %s", i+1, g, before, want)
		}
		before, want = want, min(want*3/2, maxProbe)
	}
}
