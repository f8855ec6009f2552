package results

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// A file of schema 1 (testdata/v1, written by the release before schema 2) is read as it is by
// a read-only open (its runs get the typed values its facts said in prose, the file is not
// changed), then migrated once by a writer's open; the second writer's open finds schema 2.
func TestMigrateV1(t *testing.T) {
	dir := copyV1(t)
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		open, wantVersion := OpenExisting, "1"
		if i > 0 {
			open, wantVersion = Open, SchemaVersion
		}
		s, err := open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := s.Meta("schema_version"); v != wantVersion {
			t.Errorf("open %d: schema_version %q after opening, want %s", i, v, wantVersion)
		}
		runs, err := s.Runs()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]RunRow{
			"platform=native#3": {Steady: SteadyCut, Duet: Duet{Pair: "r2-00", Round: 2}},
			"platform=docker#1": {Steady: SteadyTooShort, Duet: Duet{Pair: "r1-00", Round: 1}},
			"platform=docker#2": {Steady: SteadyNoMinimum, Duet: Duet{Pair: "r2-00", Round: 2}},
			"platform=docker#3": {Steady: SteadyCutFailed, Duet: Duet{Pair: "r3-00", Round: 3}},
			"platform=docker#4": {},
			"platform=vm#2":     {Emulated: true, Steady: SteadyOff, Duet: Duet{Pair: "r2-01", Round: 2}},
		}
		seen := 0
		for _, r := range runs {
			w, ok := want[r.ID]
			if !ok {
				continue
			}
			seen++
			if r.Emulated != w.Emulated || r.Steady != w.Steady || r.Duet != w.Duet {
				t.Errorf("%s: emulated %v steady %q duet %+v, want %v %q %+v (facts %v)",
					r.ID, r.Emulated, r.Steady, r.Duet, w.Emulated, w.Steady, w.Duet, r.Facts)
			}
		}
		if seen != len(want) {
			t.Fatalf("%d of the %d runs looked for are in the file", seen, len(want))
		}
		s.Close()
		if i == 0 {
			after, err := os.ReadFile(filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != string(before) {
				t.Error("a read-only open changed the schema 1 file")
			}
			if names := dirNames(t, dir); len(names) != 1 {
				t.Errorf("a read-only open left %v beside the file", names)
			}
		}
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// copyV1 copies the schema-1 file (testdata/v1) into a temporary directory: opening migrates it.
func copyV1(t *testing.T) string {
	t.Helper()
	old, err := os.ReadFile(filepath.Join("testdata", "v1", FileName))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), old, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A file of schema 2 (runs without the orchestrator column) reads its runs' orchestrator from
// the kubernetes_* facts they recorded, read-only (the file unchanged) and after a writer's
// open migrated it to schema 3; a run with none of those facts has none; a run stored now
// keeps what its box recorded, a run on no orchestrator reads as none.
func TestMigrateV2Orchestrator(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	must(t, err)
	k8s := map[string]string{"kubernetes_cni": "routes", "kubernetes_version": "v1.34.4", "node": "n1"}
	for i, facts := range []map[string]string{k8s, {"ran_on": "this host"}} {
		must(t, s.PutRun(context.Background(), &RunRecord{ID: fmt.Sprintf("c#%d", i+1), CellID: "c", Rep: i + 1, Seq: i + 1,
			Status: "failed", Reason: "boom", Started: time.Now(), Ended: time.Now(), Facts: facts}))
	}
	must(t, s.SetMeta(map[string]string{"schema_version": SchemaVersion}))
	must(t, s.Close())
	path := filepath.Join(dir, FileName)
	sqliteExec(t, path, `ALTER TABLE runs DROP COLUMN orchestrator; UPDATE meta SET value = '2' WHERE key = 'schema_version'`)
	before, err := os.ReadFile(path)
	must(t, err)
	want := Orchestrator{Name: "Kubernetes", Facts: []OrchestratorFact{
		{Key: "kubernetes_cluster", Label: "cluster"}, {Key: "kubernetes_cni", Label: "CNI", Value: "routes"},
		{Key: "kubernetes_kube_proxy_mode", Label: "kube-proxy"}, {Key: "kubernetes_version", Label: "Kubernetes", Value: "v1.34.4"},
		{Key: "kubernetes_nodes", Label: "nodes"}}}
	stored := Orchestrator{Name: "Orch", Facts: []OrchestratorFact{{Key: "orch_version", Label: "version", Value: "7"}}}
	for i, open := range []func(string) (*Store, error){OpenExisting, Open, OpenExisting} {
		s, err := open(dir)
		must(t, err)
		if i == 1 {
			must(t, s.PutRun(context.Background(), &RunRecord{ID: "c#3", CellID: "c", Rep: 3, Seq: 3, Status: "failed",
				Started: time.Now(), Ended: time.Now(), Facts: map[string]string{"orch_version": "7"}, Orchestrator: stored}))
			must(t, s.PutRun(context.Background(), &RunRecord{ID: "c#4", CellID: "c", Rep: 4, Seq: 4, Status: "failed",
				Started: time.Now(), Ended: time.Now(), Facts: k8s}))
		}
		runs, err := s.Runs()
		must(t, err)
		wants := map[string]Orchestrator{"c#1": want, "c#2": {}, "c#3": stored, "c#4": {}}
		for _, r := range runs {
			if w := wants[r.ID]; !reflect.DeepEqual(r.Orchestrator, w) {
				t.Errorf("open %d: %s: orchestrator %+v, want %+v", i, r.ID, r.Orchestrator, w)
			}
		}
		if v, _ := s.Meta("schema_version"); i == 0 && v != "2" || i > 0 && v != SchemaVersion {
			t.Errorf("open %d: schema_version %q", i, v)
		}
		must(t, s.Close())
		if i == 0 {
			after, err := os.ReadFile(path)
			must(t, err)
			if string(after) != string(before) {
				t.Error("a read-only open changed the schema 2 file")
			}
		}
	}
}
