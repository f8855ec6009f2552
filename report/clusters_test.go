package report

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/results"
)

// orch is an orchestrator named Kube whose facts are key=value pairs, labelled by their key.
func orch(kv ...string) results.Orchestrator {
	o := results.Orchestrator{Name: "Kube"}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Facts = append(o.Facts, results.OrchestratorFact{Key: "k_" + kv[i], Label: kv[i], Value: kv[i+1]})
	}
	return o
}

// TestClustersSection: each cell whose runs recorded an orchestrator lists its facts in their
// order, by label; a fact the runs disagree on shows every value; a fact no run has a value
// of, and a cell without an orchestrator, are left out; the heading names the orchestrator.
func TestClustersSection(t *testing.T) {
	routes := orch("cluster", "routes", "CNI", "routes", "kube-proxy", "iptables", "version", "v1.34.4", "nodes", "n1=10.250.1.11 (v1.34.4)")
	vxlan := orch("cluster", "vxlan", "CNI", "vxlan", "kube-proxy", "", "version", "v1.34.4")
	changed := orch("cluster", "vxlan", "CNI", "cilium", "kube-proxy", "", "version", "v1.34.4")
	r := &Report{
		Cells: []*Cell{{ID: "c=routes"}, {ID: "c=vxlan"}, {ID: "c=none"}},
		Runs: []results.RunRow{
			{CellID: "c=routes", Orchestrator: routes},
			{CellID: "c=vxlan", Orchestrator: vxlan},
			{CellID: "c=none", Facts: map[string]string{"ran_on": "this host"}},
			{CellID: "c=vxlan", Orchestrator: changed},
			{CellID: "c=routes", Orchestrator: routes},
		},
	}
	var b strings.Builder
	writeTextClusters(&b, r)
	want := "\norchestrator clusters (what each cell's runs recorded of their Kube cluster; values separated by | differ between runs):\n" +
		"  c=routes\n    cluster    routes\n    CNI        routes\n    kube-proxy iptables\n    version    v1.34.4\n    nodes      n1=10.250.1.11 (v1.34.4)\n" +
		"  c=vxlan\n    cluster    vxlan\n    CNI        vxlan | cilium\n    version    v1.34.4\n"
	if got := b.String(); got != want {
		t.Errorf("section:\n%s\nwant:\n%s", got, want)
	}
	b.Reset()
	writeTextClusters(&b, &Report{Cells: []*Cell{{ID: "c=none"}}, Runs: []results.RunRow{{CellID: "c=none"}}})
	if b.Len() != 0 {
		t.Errorf("a report without orchestrators has the section: %q", b.String())
	}
}

// TestClusterLinesOrder: a fact a later run lists and no earlier one does comes after the fact
// it follows in that run (not at the end), or last when it follows none.
func TestClusterLinesOrder(t *testing.T) {
	got := clusterLines([]results.Orchestrator{orch("a", "1", "c", "3"), orch("a", "1", "b", "2", "c", "3"), orch("d", "4")})
	want := []string{"    a          1", "    b          2", "    c          3", "    d          4"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// A results file of schema 2, the release before runs held their orchestrator, whose
// Kubernetes runs recorded their cluster only as kubernetes_* facts, shows the orchestrator
// clusters section as that release did (its output, verbatim).
func TestLegacyClusterFacts(t *testing.T) {
	dir := t.TempDir()
	st, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutCells([]results.CellRecord{
		{ID: "platform=kubernetes/cluster=routes", Params: map[string]string{"platform": "kubernetes", "cluster": "routes"}},
		{ID: "platform=kubernetes/cluster=vxlan", Params: map[string]string{"platform": "kubernetes", "cluster": "vxlan"}},
		{ID: "platform=native", Params: map[string]string{"platform": "native"}},
	}); err != nil {
		t.Fatal(err)
	}
	routes := map[string]string{"kubernetes_cluster": "routes", "kubernetes_cni": "routes", "kubernetes_kube_proxy_mode": "iptables",
		"kubernetes_version": "v1.34.4", "kubernetes_nodes": "bbmulti-ra-1=10.250.1.11 (v1.34.4, containerd://1.6.20)"}
	vxlan := map[string]string{"kubernetes_cluster": "vxlan", "kubernetes_cni": "vxlan", "kubernetes_version": "v1.34.4"}
	changed := map[string]string{"kubernetes_cluster": "vxlan", "kubernetes_cni": "cilium", "kubernetes_version": "v1.34.4"}
	putSmall(t, st, []smallRun{
		{cell: "platform=kubernetes/cluster=routes", rep: 1, thr: 1000, values: []int64{100_000}, weight: 10, facts: routes},
		{cell: "platform=kubernetes/cluster=vxlan", rep: 1, thr: 1000, values: []int64{100_000}, weight: 10, facts: vxlan},
		{cell: "platform=native", rep: 1, thr: 1000, values: []int64{100_000}, weight: 10, facts: map[string]string{"ran_on": "this host"}},
		{cell: "platform=kubernetes/cluster=vxlan", rep: 2, thr: 1000, values: []int64{100_000}, weight: 10, facts: changed},
		{cell: "platform=kubernetes/cluster=routes", rep: 2, thr: 1000, values: []int64{100_000}, weight: 10, facts: routes},
	})
	if err := st.SetMeta(map[string]string{"schema_version": results.SchemaVersion}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// The file schema 2 wrote: runs without the orchestrator column.
	db, err := sql.Open("sqlite", filepath.Join(dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`ALTER TABLE runs DROP COLUMN orchestrator; UPDATE meta SET value = '2' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err = results.OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := Build(st)
	if err != nil {
		t.Fatal(err)
	}
	want := "\norchestrator clusters (what each cell's runs recorded of their Kubernetes cluster; values separated by | differ between runs):\n" +
		"  platform=kubernetes/cluster=routes\n    cluster    routes\n    CNI        routes\n    kube-proxy iptables\n    Kubernetes v1.34.4\n" +
		"    nodes      bbmulti-ra-1=10.250.1.11 (v1.34.4, containerd://1.6.20)\n" +
		"  platform=kubernetes/cluster=vxlan\n    cluster    vxlan\n    CNI        vxlan | cilium\n    Kubernetes v1.34.4\n"
	for _, s := range r.Sections {
		if s.Head().Anchor != "clusters" {
			continue
		}
		var b strings.Builder
		s.Text(&b)
		if b.String() != want {
			t.Errorf("section:\n%s\nwant:\n%s", b.String(), want)
		}
		return
	}
	t.Fatal("no clusters section")
}
