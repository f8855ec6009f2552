package sysbench

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Output is what one `sysbench ... run` printed, as parsed from its standard output (sysbench
// 1.0 writes everything there, errors included). Times are seconds and latencies milliseconds,
// sysbench's own units; converting them is the caller's job.
type Output struct {
	Version     string     // "1.0.20"
	TargetRate  int        // "Target transaction rate: N/sec"; 0 in a closed loop
	Intervals   []Interval // per --report-interval line, in order
	Checkpoints []Summary  // one per --report-checkpoints point, in order
	Final       *Summary   // the report at the end; nil if sysbench did not get there
	// Histogram is the --histogram output: bucket values (ms) with counts, covering the window
	// after the last checkpoint (a checkpoint resets sysbench's histogram).
	Histogram []Bucket
	Fatal     []string // "FATAL: ..." lines, without the prefix
	Warnings  []string // "WARNING: ..." lines, without the prefix
}

// Interval is one intermediate report: rates over the interval ending at Time.
type Interval struct {
	Time       int // seconds since the threads started, as sysbench prints it
	Threads    int
	TPS, QPS   float64
	Reads      float64 // read queries per second
	Writes     float64
	Others     float64
	Percentile int     // the latency percentile reported (--percentile)
	LatencyMS  float64 // that percentile over the interval, ms
	ErrPS      float64 // ignored errors per second
	ReconnPS   float64
	// Rate mode only: the event queue length and the number of events in progress at Time.
	QueueLength, Concurrency int
	HasQueue                 bool
}

// Summary is a cumulative report (at a checkpoint or at the end).
type Summary struct {
	Reads, Writes, Others, Queries int64
	Transactions                   int64
	IgnoredErrors                  int64
	Reconnects                     int64
	TotalTime                      float64 // seconds since the threads started
	Events                         int64
	MinMS, AvgMS, MaxMS, SumMS     float64
	Percentile                     int
	PercentileMS                   float64
	Unfinished                     int64 // transactions still running at a forced shutdown
}

// Bucket is one line of sysbench's latency histogram: a bucket's representative value (ms,
// printed with 3 decimals) and its count.
type Bucket struct {
	ValueMS float64
	Count   int64
}

var (
	reVersion  = regexp.MustCompile(`^sysbench (\S+)`)
	reRate     = regexp.MustCompile(`^Target transaction rate: (\d+)/sec`)
	reInterval = regexp.MustCompile(`^\[\s*(\d+)s \] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) \(r/w/o: ([\d.]+)/([\d.]+)/([\d.]+)\) lat \(ms,(\d+)%\): ([\d.]+) err/s: ([\d.]+) reconn/s: ([\d.]+)`)
	reQueue    = regexp.MustCompile(`^\[\s*(\d+)s \] queue length: (\d+), concurrency: (\d+)`)
	reCkpt     = regexp.MustCompile(`^\[\s*\d+s \] Checkpoint report:`)
	reBucket   = regexp.MustCompile(`^\s*([\d.]+) \|\**\s+(\d+)$`)
	reKV       = regexp.MustCompile(`^\s+([a-z0-9 ]+?):\s+([\d.]+)s?(?:\s+\(([\d.]+) per sec\.\))?$`)
	rePct      = regexp.MustCompile(`^\s+(\d+)th percentile:\s+([\d.]+)$`)
	reUnfin    = regexp.MustCompile(`Number of unfinished transactions on forced shutdown: (\d+)`)
)

// Parse reads sysbench 1.0's run output. It fails only on a line it recognises but cannot
// read; lines it does not know (headers, thread fairness) are skipped, so a truncated output
// (a killed run) still yields what was printed before.
func Parse(r io.Reader) (*Output, error) {
	out := &Output{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var (
		sum        *Summary // the summary being read
		inHist     bool
		ckptNext   bool // a "Checkpoint report:" line was seen: the next summary is a checkpoint
		unfinished int64
		lineNo     int
	)
	closeSummary := func() {
		if sum == nil {
			return
		}
		sum.Unfinished, unfinished = unfinished, 0
		if ckptNext {
			out.Checkpoints = append(out.Checkpoints, *sum)
			ckptNext = false
		} else {
			out.Final = sum
		}
		sum = nil
	}
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		bad := func(err error) error { return fmt.Errorf("sysbench output line %d %q: %w", lineNo, line, err) }
		if inHist {
			if m := reBucket.FindStringSubmatch(line); m != nil {
				v, err1 := strconv.ParseFloat(m[1], 64)
				n, err2 := strconv.ParseInt(m[2], 10, 64)
				if err1 != nil || err2 != nil {
					return out, bad(fmt.Errorf("histogram bucket: %v %v", err1, err2))
				}
				out.Histogram = append(out.Histogram, Bucket{ValueMS: v, Count: n})
				continue
			}
			if strings.Contains(line, "distribution") {
				continue
			}
			inHist = false
		}
		switch {
		case strings.HasPrefix(line, "FATAL: "):
			out.Fatal = append(out.Fatal, strings.TrimPrefix(line, "FATAL: "))
		case strings.HasPrefix(line, "WARNING: "):
			out.Warnings = append(out.Warnings, strings.TrimPrefix(line, "WARNING: "))
		case strings.HasPrefix(line, "Latency histogram"):
			closeSummary()
			inHist = true
			out.Histogram = out.Histogram[:0]
		case reCkpt.MatchString(line):
			closeSummary()
			ckptNext = true
		case strings.HasPrefix(line, "SQL statistics:"):
			closeSummary()
			sum = &Summary{}
		case strings.HasPrefix(line, "["):
			closeSummary()
			if err := parseIntervalLine(out, line); err != nil {
				return out, bad(err)
			}
		case reUnfin.MatchString(line):
			unfinished, _ = strconv.ParseInt(reUnfin.FindStringSubmatch(line)[1], 10, 64)
		case out.Version == "" && reVersion.MatchString(line):
			out.Version = reVersion.FindStringSubmatch(line)[1]
		case reRate.MatchString(line):
			out.TargetRate, _ = strconv.Atoi(reRate.FindStringSubmatch(line)[1])
		case sum != nil:
			if err := parseSummaryLine(sum, line); err != nil {
				return out, bad(err)
			}
		}
	}
	closeSummary()
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read sysbench output: %w", err)
	}
	return out, nil
}

func parseIntervalLine(out *Output, line string) error {
	if m := reInterval.FindStringSubmatch(line); m != nil {
		var iv Interval
		var err error
		ints := []*int{&iv.Time, &iv.Threads}
		for i, p := range ints {
			if *p, err = strconv.Atoi(m[1+i]); err != nil {
				return err
			}
		}
		floats := []*float64{&iv.TPS, &iv.QPS, &iv.Reads, &iv.Writes, &iv.Others}
		for i, p := range floats {
			if *p, err = strconv.ParseFloat(m[3+i], 64); err != nil {
				return err
			}
		}
		if iv.Percentile, err = strconv.Atoi(m[8]); err != nil {
			return err
		}
		for i, p := range []*float64{&iv.LatencyMS, &iv.ErrPS, &iv.ReconnPS} {
			if *p, err = strconv.ParseFloat(m[9+i], 64); err != nil {
				return err
			}
		}
		out.Intervals = append(out.Intervals, iv)
		return nil
	}
	if m := reQueue.FindStringSubmatch(line); m != nil {
		t, _ := strconv.Atoi(m[1])
		n := len(out.Intervals)
		if n == 0 || out.Intervals[n-1].Time != t {
			return fmt.Errorf("queue report for %ds without an interval report", t)
		}
		iv := &out.Intervals[n-1]
		iv.QueueLength, _ = strconv.Atoi(m[2])
		iv.Concurrency, _ = strconv.Atoi(m[3])
		iv.HasQueue = true
	}
	return nil // "[ Ns ] Checkpoint report:" is matched before; anything else is not ours
}

func parseSummaryLine(s *Summary, line string) error {
	if m := rePct.FindStringSubmatch(line); m != nil {
		s.Percentile, _ = strconv.Atoi(m[1])
		v, err := strconv.ParseFloat(m[2], 64)
		s.PercentileMS = v
		return err
	}
	m := reKV.FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	// Lines not named here are not kept: "total" (queries performed) equals queries, and the
	// fairness lines.
	key, val := m[1], m[2]
	counts := map[string]*int64{"read": &s.Reads, "write": &s.Writes, "other": &s.Others,
		"transactions": &s.Transactions, "queries": &s.Queries, "ignored errors": &s.IgnoredErrors,
		"reconnects": &s.Reconnects, "total number of events": &s.Events}
	values := map[string]*float64{"total time": &s.TotalTime,
		"min": &s.MinMS, "avg": &s.AvgMS, "max": &s.MaxMS, "sum": &s.SumMS}
	var err error
	if p, ok := counts[key]; ok {
		*p, err = strconv.ParseInt(val, 10, 64)
	} else if p, ok := values[key]; ok {
		*p, err = strconv.ParseFloat(val, 64)
	}
	return err
}
