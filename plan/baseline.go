package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/spec"
)

// resolveBaselines sets each runnable cell's baseline (p.Baseline, or p.BaselineSkipped when
// the host skips that cell) and returns the problem of a baseline selector that gives a cell of
// the matrix — runnable here or not, since the spec is wrong on every host — a baseline that is
// not a cell of the matrix. "No baseline: it was skipped" is then only ever said of a cell that
// exists. The spec's key and value checks have already refused names the matrix does not have,
// so what is left is a combination the matrix (its zip, its exclusions) never forms.
func resolveBaselines(e *spec.Experiment, p *Plan, all []*Cell, skipped map[*Cell]bool) *spec.Problem {
	byID := map[string]*Cell{}
	for _, c := range all {
		byID[c.ID] = c
	}
	runnable := map[*Cell]bool{}
	for _, c := range p.Cells {
		runnable[c] = true
	}
	type miss struct {
		cell *Cell
		want map[string]string
	}
	var missing []miss
	for _, c := range all {
		want := baselineParams(c, e.Baseline)
		b, ok := byID[cellID(want)]
		switch {
		case !ok:
			missing = append(missing, miss{c, want})
		case !runnable[c]:
		case skipped[b]:
			p.BaselineSkipped[c] = b
		default:
			p.Baseline[c] = b
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sel := selector(e.Baseline)
	if e.Line("baseline") == 0 {
		sel += " (the default)"
	}
	chosen := selected(all, e.Baseline)
	if len(chosen) == 0 {
		return &spec.Problem{Line: e.Line("baseline"), Field: "baseline", Message: fmt.Sprintf(
			"%s matches no cell of the matrix after exclusions: its values are in the matrix but in no cell together (the cells: %s)",
			sel, idList(all))}
	}
	first := missing[0]
	near := nearest(chosen, first.want)
	differ := differing(near.Params, first.want)
	fix := clone(e.Baseline)
	for _, k := range differ {
		if v, ok := near.Params[k]; ok {
			fix[k] = v
		}
	}
	more := ""
	if len(missing) > 1 {
		more = fmt.Sprintf(" (nor is that of %d more cells)", len(missing)-1)
	}
	msg := fmt.Sprintf("%s gives cell %s the baseline %s, which is not a cell of the matrix%s; the cells it selects are %s, "+
		"and the nearest, %s, differs in %s: name those keys in it (e.g. baseline: %s) so that every cell has one",
		sel, first.cell.ID, cmp.Or(cellID(first.want), "(no keys)"), more, idList(chosen), near.ID, strings.Join(differ, ", "), selector(fix))
	return &spec.Problem{Line: e.Line("baseline"), Field: "baseline", Message: msg}
}

// baselineParams are c's params with the baseline's: the id of c's baseline is their cellID. A
// cell's cluster is the orchestrator's: a baseline on another platform that does not name a
// cluster (the native baseline of cells on several clusters) is matched without it.
func baselineParams(c *Cell, baseline map[string]string) map[string]string {
	params := clone(c.Params)
	for k, v := range baseline {
		params[k] = v
	}
	if _, named := baseline["cluster"]; !named && cmp.Or(baseline["platform"], c.Platform) != c.Platform {
		delete(params, "cluster")
	}
	if params["cluster"] == spec.NoCluster {
		delete(params, "cluster")
	}
	return params
}

// selected are the cells whose params hold every key of the selector with its value.
func selected(all []*Cell, sel map[string]string) []*Cell {
	var out []*Cell
	for _, c := range all {
		ok := true
		for k, v := range sel {
			ok = ok && c.Params[k] == v
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}

// nearest is the cell of cs that differs from want in the fewest keys (the first of equals).
func nearest(cs []*Cell, want map[string]string) *Cell {
	best := cs[0]
	for _, c := range cs[1:] {
		if len(differing(c.Params, want)) < len(differing(best.Params, want)) {
			best = c
		}
	}
	return best
}

// differing lists, in canonical key order, the keys whose values differ between a and b (a key
// that only one has included).
func differing(a, b map[string]string) []string {
	var out []string
	for _, k := range spec.MatrixKeys {
		va, ina := a[k]
		vb, inb := b[k]
		if ina != inb || va != vb {
			out = append(out, k)
		}
	}
	return out
}

// selector writes a baseline as the spec does: {k: v, …}, keys in canonical order.
func selector(m map[string]string) string {
	var kv []string
	for _, k := range spec.MatrixKeys {
		if v, ok := m[k]; ok {
			kv = append(kv, k+": "+v)
		}
	}
	for _, k := range spec.SortedKeys(m) {
		if !slices.Contains(spec.MatrixKeys, k) {
			kv = append(kv, k+": "+m[k])
		}
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// idList names up to four cells and says how many there are.
func idList(cs []*Cell) string {
	const show = 4
	var ids []string
	for _, c := range cs[:min(len(cs), show)] {
		ids = append(ids, c.ID)
	}
	s := strings.Join(ids, ", ")
	if len(cs) > show {
		s += fmt.Sprintf(", … (%d cells)", len(cs))
	}
	return s
}

// clone copies m (never nil, so that it can be written).
func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
