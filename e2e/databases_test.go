package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/testenv"
)

const databaseSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-db-%s
dbms: %s
workload: {type: ycsb, mix: a, threads: 2, duration: 2s, warmup: 1s}
dataset: {records: 500, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 512MiB}
matrix:
  platform: [native, docker]
  storage: [bind]
  network: [host]
repetitions: 1
baseline: {platform: native}
`

// TestDatabases runs each database added after the first three (etcd) through the binary,
// natively and in a Docker container: the data set is loaded once, the YCSB A mix runs against
// each box, and every run is stored ok with a throughput, its password checked by the server.
func TestDatabases(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	for _, name := range []string{"etcd", "ferretdb", "cassandra"} {
		t.Run(name, func(t *testing.T) {
			e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
			e.specFile = filepath.Join(e.dir, "spec.yaml")
			// Only this test's experiments: the package's other tests may run at the same time.
			t.Cleanup(func() { assertNoLeftoversOf(t, e.work, "e2e-db-"+name+"-") })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			out := e.runSpec(ctx, t, fmt.Sprintf(databaseSpec, name, name))
			got, b := e.results(ctx, t, out)
			if len(got.Runs) != 2 {
				t.Fatalf("%d runs stored, want 2 (native and docker): %s", len(got.Runs), b)
			}
			for _, r := range got.Runs {
				if r.Status != "ok" || r.Throughput == nil || *r.Throughput <= 0 || r.Env["dbms_version"] == "" {
					t.Errorf("run %s: status %s throughput %v dbms_version %q", r.ID, r.Status, r.Throughput, r.Env["dbms_version"])
				}
			}
			if testing.Verbose() {
				table, _ := e.boxbench(ctx, "report", out).CombinedOutput()
				os.Stdout.Write(table)
			}
		})
	}
}
