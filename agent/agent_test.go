package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/boxbench/boxbench/agent"
	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/agenttest"
	"github.com/boxbench/boxbench/testkit/testdb"
	"github.com/boxbench/boxbench/workload"
)

func TestMain(m *testing.M) {
	agenttest.ServeIfChild()
	os.Exit(m.Run())
}

func cellsOf(t *testing.T, file string) (*spec.Experiment, []*plan.Cell) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	e, err := spec.Parse(data, file, builtin.Vocabulary(builtin.Platforms(nil)))
	if err != nil {
		t.Fatal(err)
	}
	p, problems := plan.Expand(context.Background(), e, 1, func(context.Context, *plan.Cell) error { return nil })
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return e, p.Cells
}

// Every example's every cell builds, after a trip through the job's JSON, the same workload as
// before: the agent measures what the host would have.
func TestJobRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		e, cells := cellsOf(t, f)
		for _, c := range cells {
			data, err := json.Marshal(agent.Job{Version: agent.Version, Experiment: e, Cell: c})
			if err != nil {
				t.Fatal(err)
			}
			var back agent.Job
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatalf("%s %s: %v", f, c.ID, err)
			}
			want, err := builtin.Workload(e, c)
			if err != nil {
				t.Fatalf("%s %s: %v", f, c.ID, err)
			}
			got, err := builtin.Workload(back.Experiment, back.Cell)
			if err != nil {
				t.Fatalf("%s %s after the trip: %v", f, c.ID, err)
			}
			if w, g := fmt.Sprintf("%+v", want), fmt.Sprintf("%+v", got); w != g {
				t.Errorf("%s %s: the workload changed on the way:\nhost:  %s\nagent: %s", f, c.ID, w, g)
			}
		}
	}
}

const remoteSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: agent-test
dbms: redis
workload: {type: ycsb, mix: b, threads: 2, duration: 2s, warmup: 1s, interval: 500ms}
dataset: {records: 500, fieldCount: 2, fieldLength: 20}
matrix:
  platform: [native]
repetitions: 1
`

// A real Redis, the workload run by the agent in a child process: operations were measured,
// the histograms survive the trip, and the intervals land on the run's clock.
func TestRemoteRun(t *testing.T) {
	box, d := testdb.Start(t, redis.Redis{})
	e, err := spec.Parse([]byte(remoteSpec), "remote.yaml", builtin.Vocabulary(builtin.Platforms(nil)))
	if err != nil {
		t.Fatal(err)
	}
	p, problems := plan.Expand(context.Background(), e, 1, func(context.Context, *plan.Cell) error { return nil })
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	c := p.Cells[0]
	wl, err := builtin.Workload(e, c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cred := d.Client()
	tg := workload.Target{DBMS: "redis", Endpoint: box.Endpoint(), User: cred.User, Password: cred.Password, Database: cred.Database}
	if err := wl.Load(ctx, tg); err != nil {
		t.Fatal(err)
	}
	site := agenttest.Self(box.Endpoint())
	r := &agent.Remote{Inner: wl, Site: site, Experiment: e, Cell: c}
	clk := workload.Clock{Start: time.Now().Add(-5 * time.Second)} // the run began 5 s before the client
	res, err := r.Run(ctx, tg, clk)
	if err != nil {
		t.Fatalf("%v\nagent stderr: %s", err, site.Stderr())
	}
	if res.Throughput() <= 0 || len(res.Ops) == 0 {
		t.Fatalf("no operations measured: %+v", res)
	}
	for _, o := range res.Ops {
		h, err := hdrhistogram.Decode(o.Hist)
		if err != nil || h.TotalCount() == 0 {
			t.Fatalf("%s/%s: histogram did not survive: %v (count %d)", o.Op, o.Series, err, h.TotalCount())
		}
		if h.ValueAtQuantile(50) <= 0 {
			t.Errorf("%s/%s: median %d", o.Op, o.Series, h.ValueAtQuantile(50))
		}
	}
	if len(res.Intervals) == 0 {
		t.Fatal("no intervals")
	}
	for _, iv := range res.Intervals {
		if iv.Start < 5*time.Second || iv.End <= iv.Start || iv.End > 5*time.Second+time.Minute {
			t.Fatalf("interval %v..%v is not on the run's clock (the agent started 5 s into it)", iv.Start, iv.End)
		}
	}
	if r.Skew < 0 || r.Skew > time.Minute {
		t.Errorf("start delay %v", r.Skew)
	}
	if cred.Password != "" && strings.Contains(site.Stderr(), cred.Password) {
		t.Errorf("the agent logged the password")
	}
}

// A job the agent cannot read fails the run with the agent's reason, not with a bare status.
func TestRemoteRefusals(t *testing.T) {
	site := agenttest.Self(driver.Endpoint{})
	var out bytes.Buffer
	err := site.RunAgent(context.Background(), strings.NewReader(`{"version": 99, "experiment": {}, "cell": {}}`), &out)
	if err == nil || !strings.Contains(err.Error(), "job version 99") {
		t.Fatalf("got %v", err)
	}
	err = site.RunAgent(context.Background(), strings.NewReader(`{"version": 1, "bogus": true}`), &out)
	if err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("got %v", err)
	}
	e, cells := cellsOf(t, "../examples/storage-path.yaml")
	r := &agent.Remote{Site: site, Experiment: e, Cell: cells[0]}
	if err := r.Load(context.Background(), workload.Target{}); err == nil {
		t.Fatal("a remote client loaded data")
	}
}
