package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Report is the part of fio's --output-format=json+ that boxbench reads (fio 3.x field names).
type Report struct {
	Version     string `json:"fio version"`
	TimestampMS int64  `json:"timestamp_ms"`
	Jobs        []Job  `json:"jobs"`
}

// Job is one fio job (one per numjobs clone unless group_reporting merged them).
type Job struct {
	Name       string   `json:"jobname"`
	Error      int      `json:"error"`       // errno of the job's failure, 0 if none
	JobRuntime int64    `json:"job_runtime"` // ms, ramp excluded
	UsrCPU     float64  `json:"usr_cpu"`     // % of the job runtime
	SysCPU     float64  `json:"sys_cpu"`
	Read       DirStats `json:"read"`
	Write      DirStats `json:"write"`
	Trim       DirStats `json:"trim"`
	Sync       Sync     `json:"sync"`
}

// DirStats are one data direction's numbers.
type DirStats struct {
	IOBytes  int64   `json:"io_bytes"`
	BWBytes  int64   `json:"bw_bytes"` // bytes per second
	IOPS     float64 `json:"iops"`
	Runtime  int64   `json:"runtime"` // ms
	TotalIOs int64   `json:"total_ios"`
	ShortIOs int64   `json:"short_ios"`
	DropIOs  int64   `json:"drop_ios"`
	Clat     Latency `json:"clat_ns"`
	Lat      Latency `json:"lat_ns"`
}

// Sync is the json "sync" section: fsync/fdatasync calls and their latency.
type Sync struct {
	TotalIOs int64   `json:"total_ios"`
	Lat      Latency `json:"lat_ns"`
}

// Latency is one latency distribution in ns. Bins (json+ only) map a bin's value, as a decimal
// string, to its count; Percentile maps "99.000000" to a value.
type Latency struct {
	Min        int64            `json:"min"`
	Max        int64            `json:"max"`
	Mean       float64          `json:"mean"`
	N          int64            `json:"N"`
	Percentile map[string]int64 `json:"percentile"`
	Bins       map[string]int64 `json:"bins"`
}

// Parse reads fio's json+ output. fio may print lines before the JSON on standard output (a
// failed job's "fio: pid=..., err=..." line); they are skipped.
func Parse(out []byte) (*Report, error) {
	i := 0
	for {
		if i < len(out) && out[i] == '{' {
			break
		}
		j := bytes.IndexByte(out[i:], '\n')
		if j < 0 {
			return nil, errors.New("no JSON report in fio's output")
		}
		i += j + 1
	}
	var r Report
	if err := json.NewDecoder(bytes.NewReader(out[i:])).Decode(&r); err != nil {
		return nil, fmt.Errorf("fio json+ report: %w", err)
	}
	if len(r.Jobs) == 0 {
		return nil, errors.New("fio json+ report has no jobs")
	}
	return &r, nil
}
