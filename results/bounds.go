package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// Bounds on what a results file may hold, checked when it is read. A results file may come
// from anywhere (a colleague, a CI artifact), and report, results and compare must answer in
// bounded time and memory whatever it holds: no plan that boxbench runs comes near any bound.
// docs/results.md states them.
const (
	// MaxCells bounds the cells, MaxRuns the runs of a file: a spec plans at most
	// spec.MaxPlannedRuns runs, so at most as many cells.
	MaxCells = 10000
	MaxRuns  = 10000
	// MaxIntervalsPerRun bounds a run's interval rows (a day at one interval a second, for a
	// few op types); MaxPointsPerRun its telemetry samples (an hour at the default second for
	// 270 metrics, a day for 11: a report's work on them is proportional, and must stay within
	// seconds and well under a GiB).
	MaxIntervalsPerRun = 400_000
	MaxPointsPerRun    = 1_000_000
	// MaxParamKeys bounds the distinct matrix keys of a file's cells (a spec has a few dozen
	// keys at most): each is a column of the report's tables for every cell.
	MaxParamKeys = 256
	// MaxOpTypes bounds the distinct operation types of a file: each is a column of the
	// report's tables for every cell (the workloads have at most a handful).
	MaxOpTypes = 64
	// MaxWarnings bounds the warnings of the whole file, MaxEvents its events.
	MaxWarnings = 100_000
	MaxEvents   = 100_000
	// MaxText bounds a stored reason, log tail, message or value: a longer one is cut, and
	// says how long it was. MaxName does the same for ids, names, codes and labels.
	MaxText = 64 << 10
	MaxName = 1024
	// MaxFigure bounds the magnitude of a stored figure (ops/s, ns, bytes): beyond it sums of
	// a few thousand runs and their squares still fit a float64, and no host measures more.
	MaxFigure = 1e15
	// MaxResultBytes bounds a run's stored result (its summaries and metrics: a few KiB).
	MaxResultBytes = 1 << 20
	// MaxHistBytes bounds an encoded histogram; MaxRunHistBytes the interval histograms of one
	// run together and MaxOpsHistBytes the op summaries' of the file (each is read at once).
	MaxHistBytes    = 1 << 20
	MaxRunHistBytes = 256 << 20
	MaxOpsHistBytes = 256 << 20
)

// ErrBounds marks a results file that holds more, or other, than a results file may.
var ErrBounds = errors.New("out of a results file's bounds")

func boundsError(format string, a ...any) error {
	return fmt.Errorf("%s (%w; docs/results.md)", fmt.Sprintf(format, a...), ErrBounds)
}

// checkFigure refuses a rate or a time (ops/s, ns) that is not finite, is negative or is
// beyond MaxFigure, naming where it is.
func checkFigure(where, field string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > MaxFigure {
		return boundsError("%s: %s is %s (valid: a finite number from 0 to %g)", where, field, strconv.FormatFloat(v, 'g', -1, 64), MaxFigure)
	}
	return nil
}

// checkResultJSON refuses a stored result whose numbers checkFigure refuses, or that is not
// JSON text (it is passed through to JSON output). Its durations are in ns; MaxFigure ns is
// eleven days, more than a run may measure.
func checkResultJSON(where string, raw []byte) error {
	if len(raw) > MaxResultBytes {
		return boundsError("%s: result is %d bytes long (valid: at most %d)", where, len(raw), MaxResultBytes)
	}
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return boundsError("%s: result is not JSON text", where)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end (json.Valid said the rest)
		}
		if n, ok := tok.(json.Number); ok {
			v, err := strconv.ParseFloat(string(n), 64)
			if err != nil || math.Abs(v) > MaxFigure {
				return boundsError("%s: result holds the number %s (valid: finite, of magnitude at most %g)", where, cut(string(n), 40), MaxFigure)
			}
		}
	}
}

// cut returns s, or its first max bytes (whole characters) and how long it was.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("… [cut: %d bytes, at most %d kept]", len(s), max)
}

// cutMap cuts every key and value of m.
func cutMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[cut(k, MaxName)] = cut(v, MaxText)
	}
	return out
}

// count refuses a table of more than max rows (where is its query's condition, args its
// arguments), before any row is read.
func (s *Store) count(what, table, where string, max int, args ...any) error {
	var n int
	q := `SELECT COUNT(*) FROM ` + table
	if where != "" {
		q += ` WHERE ` + where
	}
	if err := s.db.QueryRow(q, args...).Scan(&n); err != nil {
		return err
	}
	if n > max {
		return boundsError("%s holds %d %s (valid: at most %d)", s.path, n, what, max)
	}
	return nil
}

// MaxHistDigits bounds an encoded histogram's significant digits (boxbench writes 3): with it
// the counts array a decode allocates is at most 65 × 1024 entries (half a MiB) whatever its
// range. A histogram beyond the bound, or whose header cannot be read, reads as absent (the
// report says "histogram_unreadable").
const MaxHistDigits = 3

// histOK reads an encoded histogram's header (base64 of V2 compressed: cookie, length, zlib of
// cookie, payload length, normalizing offset, digits, lowest, highest, ratio) and says whether
// its geometry is within bounds, without decoding its counts.
func histOK(b []byte) bool {
	if len(b) > MaxHistBytes {
		return false
	}
	full, err := base64.StdEncoding.DecodeString(string(b))
	if err != nil || len(full) < 8 {
		return false
	}
	z, err := zlib.NewReader(bytes.NewReader(full[8:]))
	if err != nil {
		return false
	}
	defer z.Close()
	var h [40]byte
	if _, err := io.ReadFull(z, h[:]); err != nil {
		return false
	}
	digits := int32(binary.BigEndian.Uint32(h[12:16]))
	lowest := int64(binary.BigEndian.Uint64(h[16:24]))
	highest := int64(binary.BigEndian.Uint64(h[24:32]))
	return digits >= 1 && digits <= MaxHistDigits && lowest >= 1 && highest >= 2*lowest
}

// bytes refuses a column whose values together (where is its query's condition) are longer
// than max bytes, before any is read.
func (s *Store) bytes(what, table, col, where string, max int64, args ...any) error {
	var n int64
	q := `SELECT COALESCE(SUM(LENGTH(CAST(` + col + ` AS BLOB))), 0) FROM ` + table
	if where != "" {
		q += ` WHERE ` + where
	}
	if err := s.db.QueryRow(q, args...).Scan(&n); err != nil {
		return err
	}
	if n > max {
		return boundsError("%s holds %d bytes of %s (valid: at most %d)", s.path, n, what, max)
	}
	return nil
}
