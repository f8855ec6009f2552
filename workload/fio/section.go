package fio

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// Section is fio's own section of a spec workload (section.OwnKind): the job, direct I/O and
// the file size of each job.
type Section struct {
	Job    any           `yaml:"job"` // a preset name or a map of fio job options
	Direct *bool         `yaml:"direct"`
	Size   section.Bytes `yaml:"size"` // file size per fio job
}

// ownKind is the row's decoder of Section (Own).
var ownKind = section.OwnKind{Fields: section.FieldsOf[Section](), YAML: decodeSection,
	Check: checkSection, CheckSweep: checkSweep, JSON: section.JSONOf[Section]}

// Own decodes and checks fio's own section of a workload; the same value every call.
func Own() *section.OwnKind { return &ownKind }

// SectionOf is the section a workload's kind fio decoded (zero when o is not one).
func SectionOf(o section.Own) Section { return section.As[Section](o) }

// Config sets the section's fields of c: the job, and direct I/O and the file size when the
// spec gives them.
func (s Section) Config(c *Config) {
	c.Job = s.Job
	if s.Direct != nil {
		c.Direct = *s.Direct
	}
	if s.Size > 0 {
		c.Size = int64(s.Size)
	}
}

// Sweep sets the job's iodepth (workload.job.iodepth): a preset becomes a job map of it, a map
// is copied, never changed.
func (s Section) Sweep(key, v string) (section.Own, bool) {
	if key != "workload.job.iodepth" {
		return s, false
	}
	n, _ := strconv.Atoi(v)
	job := map[string]any{}
	switch j := s.Job.(type) {
	case string:
		job["preset"] = j
	case map[string]any:
		job = maps.Clone(j)
	}
	job["iodepth"] = n
	s.Job = job
	return s, true
}

func decodeSection(n *yaml.Node, _ string, _ section.Common) (section.Own, []section.Problem) {
	var s Section
	return s, section.DecodeKnown(n, &s)
}

// The problems of a workload that gives no job, measured or a neighbour's.
const (
	jobMissing          = "missing: name a preset (randread-4k, randwrite-4k, seqwrite-64k, wal, fsync-none, fsync-low, fsync-high) or give a map of fio options"
	neighbourJobMissing = "missing: name a preset (fsync-none, fsync-low, fsync-high, seqwrite-64k, randwrite-4k, randread-4k, wal)"
)

// checkSection: a job is given; the file sizes are bounded, each and all jobs' together; the
// job is one fio takes (CheckJob), each option's problem on the job's line.
func checkSection(o section.Own, a section.At) []section.Problem {
	s := SectionOf(o)
	job := a.Path + ".job"
	var ps []section.Problem
	switch a.Stage {
	case section.StageFields:
		if s.Job == nil {
			ps = append(ps, a.Problem(job, map[bool]string{false: jobMissing, true: neighbourJobMissing}[a.Neighbour]))
		}
	case section.StageBounds:
		if msg := section.CheckSize(s.Size); msg != "" {
			ps = append(ps, a.Problem(a.Path+".size", msg))
		}
		if t := a.Common.Threads; !a.Neighbour && t > 0 && s.Size > 0 && int64(s.Size) > section.MaxBytes/int64(t) {
			ps = append(ps, a.Problem(a.Path+".size", fmt.Sprintf("%d jobs × %s is more than %s of files (valid: at most %s in all)",
				t, section.FormatBytes(int64(s.Size)), section.FormatBytes(section.MaxBytes), section.FormatBytes(section.MaxBytes))))
		}
	case section.StageSafety:
		if s.Job == nil {
			return nil
		}
		if err := CheckJob(s.Job); err != nil {
			// CheckJob names the fields Job.<option>; they live under the job here.
			for _, line := range strings.Split(err.Error(), "\n") {
				f, msg, ok := strings.Cut(line, ": ")
				if !ok || !strings.HasPrefix(f, "Job") {
					f, msg = "Job", line
				}
				ps = append(ps, section.Problem{Line: a.Line(job), Field: job + strings.TrimPrefix(f, "Job"), Message: msg})
			}
		}
	}
	return ps
}

// asyncEngines are the fio engines that keep more than one I/O in flight per job, so iodepth
// means something.
var asyncEngines = []string{"libaio", "io_uring", "posixaio"}

// checkSweep: an iodepth sweep needs an engine that keeps several I/Os in flight.
func checkSweep(o section.Own, path, key string) string {
	if key != "workload.job.iodepth" {
		return ""
	}
	engine := "psync" // fio's base option
	if m, ok := SectionOf(o).Job.(map[string]any); ok {
		if s, ok := m["ioengine"].(string); ok {
			engine = s
		}
	}
	for _, e := range asyncEngines {
		if e == engine {
			return ""
		}
	}
	return fmt.Sprintf("%s's ioengine %s issues one I/O at a time per job, so iodepth changes nothing (valid: a job map with ioengine %s, e.g. job: {preset: randread-4k, ioengine: libaio})",
		path, engine, strings.Join(asyncEngines, ", "))
}
