// Package vocabtest is the spec vocabulary of this build's databases on the native and docker
// platforms, for the tests of packages that package builtin imports (plan, runner: their
// internal tests cannot import builtin without a cycle). Nothing in it is written by hand: the
// databases, their consistency levels and their topology rules come from their table
// (builtin/databases) and each platform's words from its own Info, so it cannot drift from the
// product. What is left is glue (a spec topology to the database's, Info to the words), the
// same as builtin's, which builtin's tests check: the words match builtin.Vocabulary's, and
// both topology rules judge a set of topologies alike. (The glue cannot be shared: builtin
// imports plan, whose tests use this kit, and builtin/databases cannot import spec, whose
// tests import it.)
//
// Unlike builtin.Vocabulary it leaves CPUs nil, so that the tests that use it do not depend on
// the cpus of the host they run on.
package vocabtest

import (
	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/builtin/workloads"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/spec"
)

// Vocabulary is the built-in vocabulary with the platforms native and docker (the baseline and
// the engine every host of the suite has). The docker platform is made without an engine: only
// its description is read.
func Vocabulary() spec.Vocabulary {
	v := spec.Vocabulary{
		DBMSs:         databases.Names(),
		Baseline:      native.Name,
		Consistencies: databases.Consistencies(databases.All()),
		Workloads:     workloads.Vocabulary(workloads.All()),
		Topology: func(name string, t spec.Topology) []string {
			return databases.CheckTopology(databases.All(), name, dbms.Topology{Nodes: t.Nodes, Synchronous: t.Synchronous,
				ReplicationFactor: t.ReplicationFactor, Consistency: t.Consistency})
		},
		Platforms: map[string]spec.PlatformWords{},
	}
	for _, p := range []platform.Platform{native.New(), docker.New(nil, nil)} {
		i := p.Info()
		if s := i.Settings; s != nil {
			if v.Sections == nil {
				v.Sections = map[string]spec.SectionDecoder{}
			}
			v.Sections[s.SectionKey()] = s.DecodeSection
		}
		v.Platforms[i.Name] = words(i)
	}
	return v
}

// words are what a spec may name of a platform, as builtin.Vocabulary reads them from its Info.
func words(i platform.Info) spec.PlatformWords {
	w := spec.PlatformWords{Storages: i.Storages, Networks: i.Networks, Client: i.Client, StorageParams: i.StorageParams}
	if clu := i.Cluster; clu != nil {
		w.Clusters, w.ClusterRefuses = true, clu.ClusterRefuses()
	}
	return w
}
