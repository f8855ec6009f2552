package report

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/results"
)

// TestJSONErrorNamesTheBound: a NaN that reaches a JSON writer is an error that says what it
// is and that the results file is out of its bounds (exit 64), not encoding/json's alone.
func TestJSONErrorNamesTheBound(t *testing.T) {
	_, err := json.Marshal(map[string]float64{"x": math.NaN()})
	err = JSONError(err)
	if err == nil || !errors.Is(err, results.ErrBounds) || !strings.Contains(err.Error(), "is NaN, which JSON cannot hold") {
		t.Fatalf("JSONError: %v", err)
	}
	if JSONError(nil) != nil {
		t.Error("JSONError(nil) is not nil")
	}
}
