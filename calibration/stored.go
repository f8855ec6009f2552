// Package calibration keeps a host's last calibration: the A/A noise floors an experiment with
// the matrix key replica measured (report.Report.Stored computes them), written under the work
// root by the run that measured them and read back, as untrusted input, by plan and doctor to
// forecast what a spec can resolve on the same host (docs/precision.md). It knows nothing of
// the report's writers.
package calibration

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/boxbench/boxbench/internal/ownfs"
	"github.com/boxbench/boxbench/internal/safefile"
)

// File is where the last calibration of this host is kept, under the work root
// (a directory of boxbench's own on this host, like the seeds and locks): `plan` and `doctor`
// read it to say what a spec can resolve before it runs (docs/precision.md).
const File = "calibration.json"

// Stored is the part of a calibration that forecasts other experiments on the
// same host: the A/A noise floors by sample size, and which host they were taken on.
type Stored struct {
	// Experiment is the id of the experiment that measured it, Results its results file (the
	// run that measured it kept it: docs/precision.md).
	Experiment string `json:"experiment"`
	Results    string `json:"results,omitempty"`
	CreatedAt  string `json:"created_at"`
	// Host is the recorded environment that identifies the host: cpu_model, num_cpu, kernel.
	Host map[string]string `json:"host"`
	// Duet says the calibration ran under order: duet (its paired floors are the duets').
	Duet bool `json:"duet"`
	// DBMS and Workload are what the calibration measured (its spec's database and workload
	// type): another database's noise is not this one's.
	DBMS     string  `json:"dbms,omitempty"`
	Workload string  `json:"workload,omitempty"`
	Series   string  `json:"series"`
	Floors   []Floor `json:"floors"`
}

// Floor is the median A/A noise floor (95 % CI half-width of the ratio, percent) at N
// runs per cell over Tests A/A tests, unpaired and paired.
type Floor struct {
	N        int     `json:"n"`
	Tests    int     `json:"aa_tests"`
	Unpaired float64 `json:"unpaired_pct"`
	Paired   float64 `json:"paired_pct"`
}

// hostKeys identify a host in a stored calibration.
var hostKeys = []string{"cpu_model", "num_cpu", "kernel"}

// Host is the part of env, a recorded environment, that identifies the host in a kept
// calibration (hostKeys).
func Host(env map[string]string) map[string]string {
	out := make(map[string]string, len(hostKeys))
	for _, k := range hostKeys {
		out[k] = env[k]
	}
	return out
}

// SameHost says whether the calibration was taken on a host whose environment env matches.
func (s *Stored) SameHost(env map[string]string) bool {
	for _, k := range hostKeys {
		if s.Host[k] != env[k] {
			return false
		}
	}
	return true
}

// Save keeps s as the last calibration under dir (written whole through an
// exclusive temporary file, then renamed; never through a link at its name).
func Save(dir string, s *Stored) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	d, err := ownfs.MkdirAll(dir, 0o755)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.WriteAtomic(File, 0o644, func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	})
}

// maxCalibrationBytes and maxFloors bound what a kept calibration may hold (a calibration
// has one floor per sample size it measured: tens).
const (
	maxCalibrationBytes = 1 << 20
	maxFloors           = 1000
)

// Load reads the last calibration kept under dir; nil without error when none is.
// The file is read as untrusted: a regular file (not a link, FIFO or device) of at most 1 MiB,
// owned by root or the invoking user and unwritable by others, with sane floors; a planted or
// edited one is an error, never a forecast.
func Load(dir string) (*Stored, error) {
	path := filepath.Join(dir, File)
	b, err := safefile.Read(path, safefile.Rule{Max: maxCalibrationBytes, NoFollow: true, Owners: safefile.InvokingUsers()})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Stored
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w (it was not used)", path, err)
	}
	return &s, nil
}

// validate refuses floors no calibration could have measured.
func (s *Stored) validate() error {
	if len(s.Floors) > maxFloors {
		return fmt.Errorf("%d floors, more than the %d a calibration may hold", len(s.Floors), maxFloors)
	}
	var errs []error
	for i, f := range s.Floors {
		if f.N < 1 || f.N > 10000 || f.Tests < 0 || f.Tests > 1e6 {
			errs = append(errs, fmt.Errorf("floors[%d]: n %d, aa_tests %d (valid: n 1..10000, aa_tests 0..1000000)", i, f.N, f.Tests))
		}
		for name, v := range map[string]float64{"unpaired_pct": f.Unpaired, "paired_pct": f.Paired} {
			if math.IsNaN(v) || v < 0 || v > 1e4 {
				errs = append(errs, fmt.Errorf("floors[%d].%s %g (valid: 0..10000 percent)", i, name, v))
			}
		}
	}
	return errors.Join(errs...)
}
