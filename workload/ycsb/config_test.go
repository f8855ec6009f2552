package ycsb

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfigValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for name := range Mixes {
		c := DefaultConfig()
		c.Mix = name
		if err := c.Validate(); err != nil {
			t.Errorf("mix %s: %v", name, err)
		}
	}
}

// TestValidateListsEveryProblem: one error naming every bad field, before anything starts.
func TestValidateListsEveryProblem(t *testing.T) {
	c := DefaultConfig()
	c.Mix = ""
	c.Proportions = map[string]float64{"read": 0.5, "update": 0.3, "scan": 0.1} // sums to 0.9
	c.Threads = 0
	c.TargetRate = -5
	c.RequestDistribution = "pareto"
	c.KeyOrder = "random"
	c.ScanLengthDistribution = "normal"
	c.RecordCount = 0
	c.FieldCount = -1
	c.Duration, c.OperationCount = 0, 0
	c.Interval = time.Millisecond
	c.HotspotOpnFraction = 1.5
	c.ZipfianConstant = 1
	c.Table = "user table"
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"workload.proportions: they sum to 0.9", "workload.threads: 0", "workload.targetRate: -5",
		`workload.requestDistribution: "pareto"`, "uniform, zipfian, latest, hotspot", `workload.keyOrder: "random"`,
		`workload.scanLengthDistribution: "normal"`, "dataset.records (or bound): 0", "dataset.fieldCount: -1",
		"set workload.duration or workload.operationCount", "workload.interval: 1ms", "workload.hotspotOpnFraction: 1.5",
		"workload.zipfianConstant: 1", `workload.table: "user table"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
	if _, err := New(c, nil); err == nil {
		t.Error("New accepted an invalid config")
	}
}

func TestValidateProportions(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    map[string]float64
		mix  string
		want string
	}{
		{"unknown op", map[string]float64{"read": 0.5, "delete": 0.5}, "", `unknown operation "delete"`},
		{"negative", map[string]float64{"read": 1.5, "update": -0.5}, "", "workload.proportions.update: -0.5"},
		{"NaN", map[string]float64{"read": math.NaN()}, "", "workload.proportions.read: NaN"},
		{"both", map[string]float64{"read": 1}, "a", "not both"},
		{"neither", nil, "", "name a mix"},
		{"unknown mix", nil, "g", `workload.mix: "g" is invalid: one of a, b, c, d, e, f, read-heavy, write-heavy`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Mix, c.Proportions = tc.mix, tc.p
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want it to mention %q", err, tc.want)
			}
		})
	}
	c := DefaultConfig()
	c.Mix, c.Proportions = "", map[string]float64{"read": 0.7, "update": 0.1, "insert": 0.1, "scan": 0.05, "rmw": 0.05}
	if err := c.Validate(); err != nil {
		t.Errorf("valid custom mix rejected: %v", err)
	}
}

func TestResolveMixDefaults(t *testing.T) {
	c := DefaultConfig()
	c.Mix = "e"
	r := c.resolve()
	if r.scanLength != 100 || r.distribution != "zipfian" || r.loadThreads != c.Threads {
		t.Errorf("mix e resolved to scan %d, %s, load threads %d", r.scanLength, r.distribution, r.loadThreads)
	}
	c.Mix = "d"
	if r := c.resolve(); r.distribution != "latest" || r.scanLength != 1000 {
		t.Errorf("mix d resolved to %s, scan %d", r.distribution, r.scanLength)
	}
	c.Mix, c.Proportions = "", map[string]float64{"read": 1}
	if r := c.resolve(); r.distribution != "uniform" || r.props[opRead] != 1 {
		t.Errorf("custom resolved to %s %v", r.distribution, r.props)
	}
}

// TestWithRead: a read-proportion sweep keeps the mix's other operations in their ratios.
func TestWithRead(t *testing.T) {
	for _, tc := range []struct {
		mix  string
		read float64
		want [numOps]float64
	}{
		{"a", 0.8, [numOps]float64{0.8, 0.2, 0, 0, 0}},
		{"d", 0.5, [numOps]float64{0.5, 0, 0.5, 0, 0}},
		{"c", 0.9, [numOps]float64{0.9, 0.1, 0, 0, 0}}, // reads only: the rest goes to update
		{"e", 0.5, [numOps]float64{0.5, 0, 0.025, 0.475, 0}},
	} {
		got := withRead(Mixes[tc.mix].Proportions, tc.read)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("mix %s read %g: %v, want %v", tc.mix, tc.read, got, tc.want)
				break
			}
		}
	}
	r := 1.5
	cfg := DefaultConfig()
	cfg.ReadProportion = &r
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "workload.proportions.read: 1.5 is invalid") {
		t.Errorf("got %v", err)
	}
}
