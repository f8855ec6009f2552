package spec

import (
	"strings"
	"testing"
)

const withPublished = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: p
dbms: postgresql
workload: {type: ycsb, mix: write-heavy, duration: 20s}
dataset: {records: 1000}
matrix:
  platform: [native, docker]
  network: [host, bridge-direct]
baseline: {platform: native, network: host}
published:
  study: A. Author, A study, Venue 2020
  effects:
    - {name: docker, cells: {platform: docker, network: host}, direction: none, source: "Sec. 4"}
    - {name: bridge, cells: {network: bridge-direct}, baseline: {network: host}, direction: slower, overhead: 69, range: [60, 75], source: "Fig. 2"}
`

// TestPublished: a published block parses into the model; a bad one names every problem at
// once: the study's own rules and selectors no matrix could match (a key or value only this
// matrix lacks is a cut: TestPublishedCut).
func TestPublished(t *testing.T) {
	e, err := Parse([]byte(withPublished), "p.yaml", vocab)
	if err != nil {
		t.Fatal(err)
	}
	if p := e.Published; p == nil || len(p.Effects) != 2 || *p.Effects[1].Overhead != 69 || p.Effects[1].Baseline["network"] != "host" {
		t.Fatalf("published %+v", e.Published)
	}
	bad := strings.NewReplacer(
		"study: A. Author, A study, Venue 2020", "study: ''",
		"cells: {platform: docker, network: host}", "cells: {runtim: runsc, network: brige-direct}",
		"direction: slower", "direction: worse",
	).Replace(withPublished)
	_, err = Parse([]byte(bad), "p.yaml", vocab)
	if err == nil {
		t.Fatal("a bad published block parsed")
	}
	for _, want := range []string{
		"published.study: missing",
		`published.effects[0].cells.runtim: "runtim" is not a matrix key; did you mean "runtime"? (this matrix varies: platform, network)`,
		`published.effects[0].cells.network: "brige-direct" is not a value of network here or in any matrix; did you mean "bridge-direct"?`,
		`published.effects[1].direction: "worse" is not valid`,
		"line 11: published.effects[0]",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// TestPublishedCut (issue 45): a matrix cut to fewer cells keeps the study's block: an effect
// on a value or a key the cut left out is valid (the report says it is not measured).
func TestPublishedCut(t *testing.T) {
	cut := strings.NewReplacer("  network: [host, bridge-direct]\n", "  network: [host]\n",
		"cells: {platform: docker, network: host}", "cells: {platform: docker, network: host, runtime: runsc}").Replace(withPublished)
	e, err := Parse([]byte(cut), "p.yaml", vocab)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Published.Effects) != 2 {
		t.Errorf("effects %+v", e.Published.Effects)
	}
}
