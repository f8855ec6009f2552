package fio

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Numeric job map options with an upper bound (issue 32): fio takes what it is given and
// allocates or lays out files by it, so a spec's nrfiles, block size or queue depth is checked
// when the spec is read. Bounds: files per job 1..10000, block sizes 1 B..128 MiB (each of a
// read,write[,trim] list), queue depths 1..65536 (iodepth_low and the batches 0..65536),
// number_ios up to 2^40.
var numericBounds = map[string]struct {
	size   bool // a size with fio's units (base 1024: 4k = 4096), else a plain count
	lo, hi int64
}{
	"nrfiles": {false, 1, 10000}, "iodepth": {false, 1, 65536},
	"iodepth_batch": {false, 0, 65536}, "iodepth_batch_complete": {false, 0, 65536}, "iodepth_low": {false, 0, 65536},
	"bs": {true, 1, 128 << 20}, "blocksize": {true, 1, 128 << 20}, "number_ios": {false, 0, 1 << 40},
}

var fioSizeRe = regexp.MustCompile(`^([0-9]{1,15})([kKmMgGtTpP]?)(i?[bB])?$`)

// checkBound checks one value of an option of numericBounds.
func checkBound(k, v string) error {
	b, ok := numericBounds[k]
	if !ok {
		return nil
	}
	for _, part := range strings.Split(v, ",") {
		n, err := fioNumber(part, b.size)
		if err != nil || n < b.lo || n > b.hi {
			unit := ""
			if b.size {
				unit = " bytes (fio's units: 4k = 4096)"
			}
			return fmt.Errorf("%q is out of range (valid: %d to %d%s)", v, b.lo, b.hi, unit)
		}
	}
	return nil
}

func fioNumber(s string, size bool) (int64, error) {
	if !size {
		return strconv.ParseInt(s, 10, 64)
	}
	m := fioSizeRe.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("not a size")
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}[strings.ToLower(m[2])]
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("too large")
	}
	return n << shift, nil
}
