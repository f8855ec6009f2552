package section

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Bytes is a size written with binary units: "512MiB", "2GiB", or a plain byte count.
type Bytes int64

var bytesRe = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)$`)

var binaryUnits = map[string]float64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}

// UnmarshalYAML reads sizes with binary units. Decimal units (GB, MB) and bare letters (2G)
// are refused because they are the common source of 7 % errors: the message names the binary
// unit the user most likely meant.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseBytes(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, err)}}
	}
	*b = Bytes(v)
	return nil
}

// ParseBytes reads a size with binary units ("512MiB", "2GiB", a plain byte count).
func ParseBytes(s string) (int64, error) {
	m := bytesRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size (write it like 512MiB or 2GiB)", s)
	}
	mult, ok := binaryUnits[m[2]]
	if !ok {
		hint := ""
		switch strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(m[2], "B"), "b")) {
		case "K":
			hint = m[1] + "KiB"
		case "M":
			hint = m[1] + "MiB"
		case "G":
			hint = m[1] + "GiB"
		case "T":
			hint = m[1] + "TiB"
		}
		if hint != "" {
			return 0, fmt.Errorf("%q: unit %q is ambiguous; boxbench takes binary units: did you mean %s?", s, m[2], hint)
		}
		return 0, fmt.Errorf("%q: unknown unit %q (valid: B, KiB, MiB, GiB, TiB)", s, m[2])
	}
	f, _ := strconv.ParseFloat(m[1], 64)
	// Above 2^63 the conversion to int64 is undefined (it wraps to a negative or tiny size).
	v := math.Round(f * mult)
	if v >= math.MaxInt64 || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is too large (valid: below 8388608TiB, the largest 64-bit byte count)", s)
	}
	return int64(v), nil
}

func (b Bytes) MarshalYAML() (any, error) { return FormatBytes(int64(b)), nil }

// FormatBytes renders a byte count with the largest exact binary unit.
func FormatBytes(v int64) string {
	for _, u := range []string{"TiB", "GiB", "MiB", "KiB"} {
		m := int64(binaryUnits[u])
		if v >= m && v%m == 0 {
			return fmt.Sprintf("%d%s", v/m, u)
		}
	}
	return strconv.FormatInt(v, 10)
}

// CheckSize is the problem of a size field beyond MaxBytes or negative ("" when it is fine).
func CheckSize(b Bytes) string {
	if b < 0 || b > MaxBytes {
		return fmt.Sprintf("%s is out of range (valid: 0 for the default, up to %s)", FormatBytes(int64(b)), FormatBytes(MaxBytes))
	}
	return ""
}
