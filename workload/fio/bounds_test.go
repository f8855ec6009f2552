package fio

import (
	"strings"
	"testing"
)

// TestJobBounds: nrfiles, block sizes and queue depths in a job map have upper bounds (issue
// 32); ordinary values pass.
func TestJobBounds(t *testing.T) {
	for _, ok := range []map[string]any{
		{"rw": "randread", "bs": "4k", "iodepth": 32, "nrfiles": 4},
		{"rw": "randrw", "bs": "4k,64k", "iodepth_low": 0},
		{"rw": "write", "blocksize": "1m"},
	} {
		if err := CheckJob(ok); err != nil {
			t.Errorf("%v refused: %v", ok, err)
		}
	}
	for _, c := range []struct {
		job  map[string]any
		want string
	}{
		{map[string]any{"rw": "read", "nrfiles": 100000000}, `Job.nrfiles: "100000000" is out of range (valid: 1 to 10000)`},
		{map[string]any{"rw": "read", "nrfiles": 0}, `Job.nrfiles: "0" is out of range`},
		{map[string]any{"rw": "read", "bs": "1p"}, `Job.bs: "1p" is out of range (valid: 1 to 134217728 bytes`},
		{map[string]any{"rw": "read", "bs": "4k,99999999999999999999"}, `Job.bs: "4k,99999999999999999999" is out of range`},
		{map[string]any{"rw": "read", "iodepth": 1000000}, `Job.iodepth: "1000000" is out of range (valid: 1 to 65536)`},
	} {
		err := CheckJob(c.job)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want %q, got %v", c.job, c.want, err)
		}
	}
}
