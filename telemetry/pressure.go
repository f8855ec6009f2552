package telemetry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// psiResources are the resources a pressure file exists for.
var psiResources = []string{"cpu", "memory", "io"}

// readPressure adds pressure_<res>_<some|full>_seconds_total for each <res>.pressure file in
// dir. A missing file or line is absent (no PSI in this kernel or for this group).
func readPressure(r reading, dir string) error {
	var errs []error
	for _, res := range psiResources {
		f, err := os.Open(filepath.Join(dir, res+".pressure"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		totals, err := parsePressure(f)
		f.Close()
		if errors.Is(err, syscall.EOPNOTSUPP) {
			continue // PSI compiled in but disabled (psi=0): reads fail, the values are absent
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.Name(), err))
			continue
		}
		for kind, us := range totals {
			r.set("pressure_"+res+"_"+kind+"_seconds_total", float64(us)/1e6)
		}
	}
	return errors.Join(errs...)
}

// parsePressure reads a PSI file ("some avg10=0.00 avg60=0.00 avg300=0.00 total=123") and
// returns the cumulative stall time in microseconds per line kind ("some", "full").
func parsePressure(rd io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		kind := f[0]
		if kind != "some" && kind != "full" {
			return nil, fmt.Errorf("unexpected line %q", sc.Text())
		}
		found := false
		for _, kv := range f[1:] {
			v, ok := strings.CutPrefix(kv, "total=")
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %q: %w", sc.Text(), err)
			}
			out[kind], found = n, true
		}
		if !found {
			return nil, fmt.Errorf("line %q has no total", sc.Text())
		}
	}
	return out, sc.Err()
}
