package spec

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/spec/section"
)

var replicaRe = regexp.MustCompile(`^[a-z0-9_-]{1,16}$`)

func (c *checker) matrix() {
	m := c.e.Matrix
	if len(m.Dims) == 0 && len(m.Zip) == 0 {
		c.add("matrix", "empty: give at least one key to vary, e.g. platform: [native, docker] (keys: %s)", strings.Join(MatrixKeys, ", "))
		return
	}
	seen := map[string]bool{}
	checkDim := func(d Dim, where string) {
		line := d.Line
		switch {
		case !contains(MatrixKeys, d.Key):
			msg := fmt.Sprintf("unknown matrix key %q (valid: %s)", d.Key, strings.Join(MatrixKeys, ", "))
			if s := sweepAlias(d.Key); s != "" {
				msg = fmt.Sprintf("unknown matrix key %q; did you mean %q? (a sweep key is the path of the field it varies; valid: %s)", d.Key, s, strings.Join(MatrixKeys, ", "))
			} else if s := section.Closest(d.Key, MatrixKeys); s != "" {
				msg = fmt.Sprintf("unknown matrix key %q; did you mean %q? (valid: %s)", d.Key, s, strings.Join(MatrixKeys, ", "))
			}
			c.put(Problem{Line: line, Field: where + d.Key, Message: msg})
			return
		case seen[d.Key]:
			c.put(Problem{Line: line, Field: where + d.Key, Message: "appears twice in the matrix"})
		case len(d.Values) == 0:
			c.put(Problem{Line: line, Field: where + d.Key, Message: "has no values"})
		}
		seen[d.Key] = true
		if d.Key == "replica" {
			for _, v := range d.Values {
				if !replicaRe.MatchString(v) {
					c.put(Problem{Line: line, Field: where + d.Key,
						Message: fmt.Sprintf("%q is not a replica label (valid: 1-16 of a-z 0-9 _ -, e.g. a, b, c)", v)})
				}
			}
		}
		if IsSweepKey(d.Key) {
			c.checkSweep(d, where)
		}
		if contains(LimitKeys, d.Key) {
			var scratch resource.Limits
			for _, v := range d.Values {
				if d.Key == "cpuset" {
					c.cpuset(where+d.Key, v) // also against the host's cpus
					continue
				}
				if err := setLimit(&scratch, d.Key, v); err != nil {
					c.put(Problem{Line: line, Field: where + d.Key, Message: err.Error()})
				}
			}
		}
		valid := c.e.Values(d.Key)
		dup := map[string]bool{}
		for _, v := range d.Values {
			if dup[v] && where == "matrix." { // zipped keys repeat values; their tuples must differ
				c.put(Problem{Line: line, Field: where + d.Key, Message: fmt.Sprintf("value %q is listed twice", v)})
			}
			dup[v] = true
			if valid != nil && !contains(valid, v) && !(d.Key == "storage" && parametric(valid, v)) {
				msg := fmt.Sprintf("%q is not valid (valid: %s)", v, strings.Join(valid, ", "))
				if s := section.Closest(v, valid); s != "" {
					msg = fmt.Sprintf("%q is not valid; did you mean %q? (valid: %s)", v, s, strings.Join(valid, ", "))
				}
				c.put(Problem{Line: line, Field: where + d.Key, Message: msg})
			}
		}
	}
	for _, d := range m.Dims {
		checkDim(d, "matrix.")
	}
	for _, d := range m.Zip {
		checkDim(d, "matrix.zip.")
		if len(d.Values) != len(m.Zip[0].Values) {
			c.put(Problem{Line: d.Line, Field: "matrix.zip." + d.Key,
				Message: fmt.Sprintf("has %d values but %s has %d; zipped keys need lists of equal length", len(d.Values), m.Zip[0].Key, len(m.Zip[0].Values))})
		}
	}
	if len(m.Zip) > 0 {
		seenTuple := map[string]int{}
		for i := range m.Zip[0].Values {
			var t []string
			for _, d := range m.Zip {
				if i < len(d.Values) {
					t = append(t, d.Key+"="+d.Values[i])
				}
			}
			key := strings.Join(t, ",")
			if j, ok := seenTuple[key]; ok {
				c.put(Problem{Line: m.Zip[0].Line, Field: "matrix.zip",
					Message: fmt.Sprintf("entries %d and %d are the same (%s)", j+1, i+1, key)})
			}
			seenTuple[key] = i
		}
	}
	// Sets, not lists: an exclude list of thousands over a key of thousands of values stays linear.
	values := map[string]map[string]bool{}
	for _, d := range append(append([]Dim{}, m.Dims...), m.Zip...) {
		if values[d.Key] == nil {
			values[d.Key] = map[string]bool{}
		}
		for _, v := range d.Values {
			values[d.Key][v] = true
		}
	}
	for i, ex := range m.Exclude {
		for _, k := range SortedKeys(ex) {
			if v := ex[k]; values[k] == nil {
				c.add("matrix.exclude", "entry %d: %q is not a key of this matrix (keys: %s)", i+1, k, strings.Join(c.e.Keys(), ", "))
			} else if !values[k][v] {
				c.add("matrix.exclude", "entry %d: %s=%s matches nothing (values of %s: %s)", i+1, k, v, k, listCut(c.e.ValuesOf(k)))
			}
		}
	}
	for k, v := range c.e.Baseline {
		if !c.e.varies(k) {
			c.add("baseline", "%q is not a key of this matrix (keys: %s)", k, strings.Join(c.e.Keys(), ", "))
		} else if !contains(c.e.ValuesOf(k), v) {
			c.add("baseline", "%s=%s is not in the matrix (values of %s: %s)", k, v, k, listCut(c.e.ValuesOf(k)))
		}
	}
}

// Keys returns the matrix keys in file order (dims, then zipped keys).
func (e *Experiment) Keys() []string {
	var k []string
	for _, d := range e.Matrix.Dims {
		k = append(k, d.Key)
	}
	for _, d := range e.Matrix.Zip {
		k = append(k, d.Key)
	}
	return k
}

func (e *Experiment) varies(key string) bool { return contains(e.Keys(), key) }

// ValuesOf returns the values the matrix gives key.
func (e *Experiment) ValuesOf(key string) []string {
	for _, d := range append(append([]Dim{}, e.Matrix.Dims...), e.Matrix.Zip...) {
		if d.Key == key {
			return d.Values
		}
	}
	return nil
}
