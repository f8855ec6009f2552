package spec

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

func typeErr(n *yaml.Node, format string, a ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: ", n.Line) + fmt.Sprintf(format, a...)}}
}

// UnmarshalYAML reads "20s", "1m30s". Negative durations are rejected.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return typeErr(n, "%q is not a duration (write it like 20s, 1m30s or 500ms)", n.Value)
	}
	if v < 0 {
		return typeErr(n, "%q is negative; a duration must be zero or more", n.Value)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// ParseBytes reads a size with binary units ("512MiB", "2GiB", a plain byte count).
func ParseBytes(s string) (int64, error) { return section.ParseBytes(s) }

// FormatBytes renders a byte count with the largest exact binary unit.
func FormatBytes(v int64) string { return section.FormatBytes(v) }

// UnmarshalYAML reads "2%" or a fraction 0.02.
func (p *Percent) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	div := 1.0
	if strings.HasSuffix(s, "%") {
		s, div = strings.TrimSpace(strings.TrimSuffix(s, "%")), 100
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f/div >= 1 {
		return typeErr(n, "%q is not a percentage between 0 and 100 (write it like 2%%)", n.Value)
	}
	*p = Percent(f / div)
	return nil
}

// UnmarshalYAML reads either a count (`repetitions: 3`) or adaptive bounds.
func (r *Repetitions) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		v, err := strconv.Atoi(n.Value)
		if err != nil {
			return typeErr(n, "repetitions %q is not a whole number (or give {min, max, targetCIHalfWidth or targetEffect})", n.Value)
		}
		r.Min, r.Max = v, v
		return nil
	}
	if n.Kind == yaml.MappingNode {
		// Node.Decode has no known-field check: without this, a typo (maxx, targetEfect)
		// would vanish and the repetitions would silently be fixed.
		valid := section.Fields(reflect.TypeOf(Repetitions{}))
		var errs []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; !contains(valid, k) {
				msg := fmt.Sprintf("line %d: field %s not found in type spec.plain", n.Content[i].Line, k)
				errs = append(errs, msg) // rewrite() names the field and the valid ones
			}
		}
		if len(errs) > 0 {
			return &yaml.TypeError{Errors: errs}
		}
	}
	type plain Repetitions
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*r = Repetitions(p)
	if r.Max == 0 {
		r.Max = r.Min
	}
	return nil
}

func (r Repetitions) MarshalYAML() (any, error) {
	if !r.Adaptive() {
		return r.Min, nil
	}
	m := map[string]any{"min": r.Min, "max": r.Max}
	if r.TargetCIHalfWidth > 0 {
		m["targetCIHalfWidth"] = fmt.Sprintf("%g%%", float64(r.TargetCIHalfWidth)*100)
	}
	if r.TargetEffect > 0 {
		m["targetEffect"] = fmt.Sprintf("%g%%", float64(r.TargetEffect)*100)
	}
	return m, nil
}

// UnmarshalYAML reads the matrix: keys with lists of values, plus zip and exclude.
func (m *Matrix) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return typeErr(n, "matrix must be a mapping of keys to lists of values")
	}
	var errs []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "zip":
			if v.Kind != yaml.MappingNode {
				errs = append(errs, fmt.Sprintf("line %d: matrix.zip must map keys to lists of equal length", v.Line))
				continue
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				d, err := dim(v.Content[j], v.Content[j+1], "matrix.zip.")
				if err != "" {
					errs = append(errs, err)
					continue
				}
				m.Zip = append(m.Zip, d)
			}
		case "exclude":
			var ex []map[string]string
			if err := v.Decode(&ex); err != nil {
				errs = append(errs, fmt.Sprintf("line %d: matrix.exclude must be a list of {key: value} maps", v.Line))
				continue
			}
			m.Exclude = append(m.Exclude, ex...)
		default:
			d, err := dim(k, v, "matrix.")
			if err != "" {
				errs = append(errs, err)
				continue
			}
			m.Dims = append(m.Dims, d)
		}
	}
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	return nil
}

func dim(k, v *yaml.Node, prefix string) (Dim, string) {
	d := Dim{Key: k.Value, Line: k.Line}
	if v.Kind == yaml.ScalarNode && v.Value != "" {
		d.Values = []string{v.Value}
		return d, ""
	}
	if v.Kind != yaml.SequenceNode {
		return d, fmt.Sprintf("line %d: %s%s must be a list of values, like [a, b]", v.Line, prefix, k.Value)
	}
	for _, e := range v.Content {
		if e.Kind != yaml.ScalarNode {
			return d, fmt.Sprintf("line %d: %s%s values must be plain words", e.Line, prefix, k.Value)
		}
		d.Values = append(d.Values, e.Value)
	}
	return d, ""
}
