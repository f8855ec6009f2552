// Package plan expands an experiment's matrix into cells, filters out what the host cannot run
// (with the reason), and fixes the order of runs.
package plan

import (
	"cmp"
	"context"
	"fmt"
	"github.com/boxbench/boxbench/internal/resource"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/spec"
)

// Cell is one point of the matrix.
type Cell struct {
	ID     string            // stable path of key=value segments in canonical key order
	Params map[string]string // the matrix keys and their values for this cell
	// Resolved settings (matrix value, or the spec's default).
	DBMS, Workload, Platform, Runtime, Storage, Network, Neighbour, Mix, Bound string
	Cluster                                                                    string // the `cluster` key: "" = the platform's default cluster
	ClientPolicy                                                               string // placement.Policy*
	Records                                                                    int64
	// Resources are the box's limits: the spec's limits: with the cell's limit keys applied.
	Resources resource.Limits
	// Topology is the spec's topology (nil: one server); every node gets Resources.
	Topology *spec.Topology
}

// Skip is a cell the host cannot run, and why.
type Skip struct {
	Cell   *Cell
	Reason string
}

// Run is one repetition of one cell.
type Run struct {
	Cell *Cell
	Rep  int // 1-based
}

// ID is the run's stable identity within its experiment: "<cell id>#<rep>".
func (r Run) ID() string { return fmt.Sprintf("%s#%d", r.Cell.ID, r.Rep) }

// Plan is an expanded experiment.
type Plan struct {
	Cells    []*Cell // runnable, in canonical order
	Skipped  []Skip
	Runs     []Run // the first Repetitions.Min rounds, in run order (order: duet: each duet's two runs, side A first)
	Seed     uint64
	Baseline map[*Cell]*Cell // each cell's baseline (absent when the baseline cell is skipped; the baseline maps to itself)
	// BaselineSkipped holds each runnable cell whose baseline is a cell this host skips: that
	// cell (its reason is in Skipped). A baseline that is no cell of the matrix is a problem of
	// Expand, so a runnable cell is in exactly one of Baseline and BaselineSkipped.
	BaselineSkipped map[*Cell]*Cell
	// Prerequisites are what this host lacks for some of Cells that one command makes (an
	// image not built, a package not installed), once each by command, in the order first
	// found: those cells are planned as they will run once the commands have run, and `run`
	// refuses the plan until then.
	Prerequisites []Prerequisite
}

// Prerequisite is a need of this host's (the command that meets it, an estimate of its time)
// and the cells that wait for it.
type Prerequisite struct {
	prereq.Need
	Cells []*Cell
}

// Unmet is the error of a plan with prerequisites, naming each command, nil without.
func (p *Plan) Unmet() error {
	if len(p.Prerequisites) == 0 {
		return nil
	}
	var lines []string
	for _, pr := range p.Prerequisites {
		lines = append(lines, fmt.Sprintf("%s (%d cell(s) wait for it)", pr.String(), len(pr.Cells)))
	}
	return fmt.Errorf("this host lacks what %d command(s) make; run them first, then again:\n  %s",
		len(lines), strings.Join(lines, "\n  "))
}

// Checker says why a cell cannot run on this host (nil when it can). An error that only carries
// needs (prereq.Split: a command makes the cell runnable) plans the cell with them as the plan's
// Prerequisites; any other reason skips it.
type Checker func(ctx context.Context, c *Cell) error

// Expand builds the plan. Problems that depend on the expansion (a baseline that matches no
// cell, an exclusion that removes everything) come back as spec problems with their lines.
func Expand(ctx context.Context, e *spec.Experiment, seed uint64, check Checker) (*Plan, []spec.Problem) {
	all := cells(e)
	var problems []spec.Problem
	if len(all) == 0 {
		problems = append(problems, spec.Problem{Line: e.Line("matrix.exclude"), Field: "matrix.exclude",
			Message: "excludes every cell of the matrix"})
		return nil, problems
	}
	p := &Plan{Seed: seed, Baseline: map[*Cell]*Cell{}, BaselineSkipped: map[*Cell]*Cell{}}
	check = once(check)
	for _, c := range all {
		err := check(ctx, c)
		needs, rest := prereq.Split(err)
		if rest != nil {
			p.Skipped = append(p.Skipped, Skip{Cell: c, Reason: err.Error()})
			continue
		}
		p.Cells = append(p.Cells, c)
		p.need(c, needs)
	}
	skipped := map[*Cell]bool{}
	for _, s := range p.Skipped {
		skipped[s.Cell] = true
	}
	baseline := resolveBaselines(e, p, all, skipped)
	if len(p.Cells) == 0 {
		// Nothing can run here: say why (a database that is not installed, with the command
		// that installs it) instead of a baseline that "matches no cell".
		problems = append(problems, spec.Problem{Line: e.Line("matrix"), Field: "matrix",
			Message: "no cell of the matrix can run on this host: " + distinctReasons(p.Skipped)})
	} else if baseline != nil {
		problems = append(problems, *baseline)
	}
	p.Runs = Order(p.Cells, 1, e.Repetitions.Min, e.Order, seed)
	if e.Order == "duet" {
		p.Runs = nil
		for _, pr := range DuetPairs(p, 1, e.Repetitions.Min) {
			rs := pr.Runs()
			p.Runs = append(p.Runs, rs[0], rs[1])
		}
	}
	return p, problems
}

// need records that c waits for needs.
func (p *Plan) need(c *Cell, needs []prereq.Need) {
	for _, n := range needs {
		i := slices.IndexFunc(p.Prerequisites, func(pr Prerequisite) bool { return pr.Command == n.Command })
		if i < 0 {
			p.Prerequisites = append(p.Prerequisites, Prerequisite{Need: n})
			i = len(p.Prerequisites) - 1
		}
		if cs := p.Prerequisites[i].Cells; len(cs) == 0 || cs[len(cs)-1] != c {
			p.Prerequisites[i].Cells = append(cs, c)
		}
	}
}

// once asks check once per distinct choice the host's checks read (platform, dbms, storage,
// network, runtime, cluster, topology): cells that differ only in workloads, limits, sweeps or replicas
// get the first one's answer, so a plan of thousands of cells asks the engine or the cluster
// once per choice, not once per cell. An answer cut short by cancellation is not kept.
func once(check Checker) Checker {
	seen := map[string]error{}
	return func(ctx context.Context, c *Cell) error {
		key := fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s", c.Platform, c.DBMS, c.Storage, c.Network, c.Runtime, c.Cluster, topologyKey(c.Topology))
		if err, ok := seen[key]; ok {
			return err
		}
		err := check(ctx, c)
		if ctx.Err() == nil {
			seen[key] = err
		}
		return err
	}
}

func topologyKey(t *spec.Topology) string {
	if t == nil {
		return ""
	}
	sync := "-"
	if t.Synchronous != nil {
		sync = strconv.FormatBool(*t.Synchronous)
	}
	return fmt.Sprintf("%d/%s/%d/%s", t.Nodes, sync, t.ReplicationFactor, t.Consistency)
}

// distinctReasons joins the skip reasons, each once.
func distinctReasons(skips []Skip) string {
	var out []string
	seen := map[string]bool{}
	for _, s := range skips {
		for _, r := range strings.Split(s.Reason, "\n") {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return strings.Join(out, "; ")
}

// Order lists repetitions from..to (1-based, inclusive) of cells. "randomized" is a randomised
// block design: each round holds every cell once, shuffled, so slow drift on a noisy host is
// spread evenly over the cells; "sequential" runs each cell's repetitions back to back.
func Order(cells []*Cell, from, to int, order string, seed uint64) []Run {
	var runs []Run
	if order == "sequential" {
		for _, c := range cells {
			for r := from; r <= to; r++ {
				runs = append(runs, Run{Cell: c, Rep: r})
			}
		}
		return runs
	}
	for r := from; r <= to; r++ {
		// A generator per round, so adding rounds later (adaptive repetitions, resume) does
		// not change the order of earlier ones.
		rng := rand.New(rand.NewPCG(seed, uint64(r)))
		round := append([]*Cell(nil), cells...)
		rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		for _, c := range round {
			runs = append(runs, Run{Cell: c, Rep: r})
		}
	}
	return runs
}

// cellID joins params in canonical key order.
func cellID(params map[string]string) string {
	var seg []string
	for _, k := range spec.MatrixKeys {
		if v, ok := params[k]; ok {
			seg = append(seg, k+"="+v)
		}
	}
	return strings.Join(seg, "/")
}

// cells expands dims × zip, drops exclusions, and resolves each cell's settings.
func cells(e *spec.Experiment) []*Cell {
	combos := []map[string]string{{}}
	for _, d := range e.Matrix.Dims {
		var next []map[string]string
		for _, base := range combos {
			for _, v := range d.Values {
				next = append(next, with(base, d.Key, v))
			}
		}
		combos = next
	}
	if len(e.Matrix.Zip) > 0 {
		var next []map[string]string
		for _, base := range combos {
			for i := range e.Matrix.Zip[0].Values {
				m := base
				for _, z := range e.Matrix.Zip {
					m = with(m, z.Key, z.Values[i])
				}
				next = append(next, m)
			}
		}
		combos = next
	}
	var out []*Cell
	ex := spec.NewExcluder(e.Matrix.Exclude)
	for _, params := range combos {
		if ex.Excludes(params) {
			continue
		}
		if params["cluster"] == spec.NoCluster {
			// No named cluster: the key is absent from the cell (its id, the baseline match).
			params = maps.Clone(params)
			delete(params, "cluster")
		}
		out = append(out, resolve(e, params))
	}
	sort.SliceStable(out, func(i, j int) bool { return lessID(out[i].ID, out[j].ID) })
	return out
}

// lessID orders cell ids as strings, except that where two ids first differ in the value of
// the same sweep key (whose values are all numbers, validated), the numbers decide: a sweep's
// cells then run and list as 5, 10, 15 … instead of 10, 15, 5. Only sweep keys, so that keys
// mixing numbers and words (cpuset 1 and 0-1) keep a consistent (string) order.
func lessID(a, b string) bool {
	sa, sb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < min(len(sa), len(sb)); i++ {
		if sa[i] == sb[i] {
			continue
		}
		ka, va, _ := strings.Cut(sa[i], "=")
		kb, vb, _ := strings.Cut(sb[i], "=")
		fa, ea := strconv.ParseFloat(va, 64)
		fb, eb := strconv.ParseFloat(vb, 64)
		if ka == kb && spec.IsSweepKey(ka) && ea == nil && eb == nil && fa != fb {
			return fa < fb
		}
		break
	}
	return a < b
}

func with(m map[string]string, k, v string) map[string]string {
	n := make(map[string]string, len(m)+1)
	for a, b := range m {
		n[a] = b
	}
	n[k] = v
	return n
}

func resolve(e *spec.Experiment, params map[string]string) *Cell {
	get := func(k, def string) string {
		if v, ok := params[k]; ok {
			return v
		}
		return def
	}
	wl := get("workload", "")
	c := &Cell{ID: cellID(params), Params: params, DBMS: get("dbms", e.DBMS), Workload: wl,
		Platform: get("platform", e.DefaultPlatform()), Runtime: get("runtime", ""),
		Storage: get("storage", "bind"), Network: get("network", "host"), Neighbour: get("neighbour", "none"),
		Mix: get("mix", e.FactsOf(e.WorkloadOf(wl)).Mix), Bound: get("bound", e.Dataset.Bound), Cluster: get("cluster", ""),
		ClientPolicy: get("clientPolicy", cmp.Or(e.Placement.ClientPolicy, placement.PolicyNormal))}
	c.Resources = e.ResourcesOf(params)
	c.Topology = e.Topology
	if e.Placement.Server != "" {
		// The server's placement reaches every platform as the box's cpuset limit (validation
		// refuses a cpuset given both ways).
		c.Resources.Cpuset = e.Placement.Server
	}
	c.Records = Records(e, c.Bound, c.Resources.MemoryBytes)
	if n := spec.RecordsOf(params); n > 0 {
		c.Records = n // a dataset.records sweep
	}
	return c
}

// Records sizes the data set. A bound data set is sized from the memory limit of the database
// (memBytes: the cell's), never from host RAM: memory-bound data takes a quarter of the limit (it
// fits beside the server's own memory with room to spare), disk-bound data four times the limit.
func Records(e *spec.Experiment, bound string, memBytes int64) int64 {
	if bound == "" {
		return e.Dataset.Records
	}
	per := int64(e.Dataset.FieldCount*e.Dataset.FieldLength) + 24 // fields + key
	mem := memBytes
	if bound == "memory" {
		return mem / 4 / per
	}
	return mem * 4 / per
}
