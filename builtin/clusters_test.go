package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
)

const clustersSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: clusters
dbms: etcd
topology: {nodes: 3}
workload: {type: ycsb, mix: write-heavy, duration: 5s}
dataset: {records: 100}
kubernetes:
  clusters:
    routes: {kubeconfig: /var/lib/boxbench/multi-ra/admin.kubeconfig}
    vxlan: {kubeconfig: /var/lib/boxbench/multi-vx/admin.kubeconfig, context: boxbench-multi-vx}
matrix:
  zip: {platform: [native, kubernetes, kubernetes], network: [netns, pod, pod], cluster: [none, routes, vxlan]}
repetitions: 1
baseline: {platform: native, network: netns}
`

// TestClusterKey (issue 30): the cluster key's values are the names of kubernetes.clusters (and
// none); a cell on a named cluster carries it in its id, a cell on none does not, and both
// clusters' cells are compared with the one native baseline, which names no cluster.
func TestClusterKey(t *testing.T) {
	v := Vocabulary(Platforms(nil))
	e, err := spec.Parse([]byte(clustersSpec), "c.yaml", v)
	if err != nil {
		t.Fatal(err)
	}
	p, problems := plan.Expand(context.Background(), e, 1, func(context.Context, *plan.Cell) error { return nil })
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	base := "platform=native/network=netns"
	got := map[string]string{}
	for _, c := range p.Cells {
		b := "-"
		if p.Baseline[c] != nil {
			b = p.Baseline[c].ID
		}
		got[c.ID] = c.Cluster + " vs " + b
	}
	want := map[string]string{
		base: " vs " + base,
		"platform=kubernetes/network=pod/cluster=routes": "routes vs " + base,
		"platform=kubernetes/network=pod/cluster=vxlan":  "vxlan vs " + base,
	}
	if len(got) != len(want) {
		t.Errorf("cells %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("cell %s: %q, want %q", id, got[id], w)
		}
	}

	// Bad names, every one at once, with the field and what is valid.
	bad := strings.NewReplacer("cluster: [none, routes, vxlan]", "cluster: [none, route, vxlan]",
		"    routes: {", "    Bad_Name: {kubeconfig: relative}\n    routes: {",
		"context: boxbench-multi-vx", "context: \"a\\tb\"").Replace(clustersSpec)
	_, err = spec.Parse([]byte(bad), "c.yaml", v)
	if err == nil {
		t.Fatal("bad cluster names parsed")
	}
	for _, w := range []string{
		`kubernetes.clusters: "Bad_Name" is not a valid cluster name`,
		`kubernetes.clusters.vxlan.context: "a\\tb" is not valid`,
		`matrix.zip.cluster: "route" is not valid; did you mean "routes"? (valid: none, routes, vxlan)`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("problems lack %q:\n%v", w, err)
		}
	}
}

// TestClusterBaselineNotACell (issue 45): under a matrix with a cluster key, baseline
// {platform: native} gives the kubernetes cells platform=native/network=pod, which the matrix
// does not have: a problem that names it and the baseline that would do, not cells planned as
// "no baseline: it was skipped".
func TestClusterBaselineNotACell(t *testing.T) {
	s := strings.Replace(clustersSpec, "baseline: {platform: native, network: netns}", "baseline: {platform: native}", 1)
	e, err := spec.Parse([]byte(s), "c.yaml", Vocabulary(Platforms(nil)))
	if err != nil {
		t.Fatal(err)
	}
	_, problems := plan.Expand(context.Background(), e, 1, func(context.Context, *plan.Cell) error { return nil })
	if len(problems) != 1 {
		t.Fatalf("problems: %v", problems)
	}
	for _, w := range []string{
		"baseline: {platform: native} gives cell platform=kubernetes/network=pod/cluster=routes the baseline platform=native/network=pod, which is not a cell of the matrix (nor is that of 1 more cells)",
		"the cells it selects are platform=native/network=netns",
		"differs in network",
		"e.g. baseline: {platform: native, network: netns}",
	} {
		if !strings.Contains(problems[0].String(), w) {
			t.Errorf("problem lacks %q:\n%s", w, problems[0])
		}
	}
}
