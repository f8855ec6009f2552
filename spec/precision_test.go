package spec

import (
	"strings"
	"testing"
	"time"
)

// hostVocab is vocab on a fake host with n cpus (0 … n-1).
func hostVocab(n int) Vocabulary {
	v := vocab
	v.CPUs = make([]int, n)
	for i := range v.CPUs {
		v.CPUs[i] = i
	}
	return v
}

func TestPrecisionDefaults(t *testing.T) {
	e, err := Parse([]byte(good), "good.yaml", vocab)
	if err != nil {
		t.Fatal(err)
	}
	q := e.QuietStart
	if q.Timeout.D() != DefaultQuietTimeout || q.Window.D() != time.Second || q.CPUBusy != 0.10 || q.DiskBusy != 0.10 {
		t.Errorf("quietStart defaults %+v", q)
	}
	if e.SteadyState != "mser" || e.Cache != "warm" {
		t.Errorf("steadyState %q cache %q, want mser, warm", e.SteadyState, e.Cache)
	}
	e, err = Parse([]byte(good+"quietStart: {timeout: 0s}\nsteadyState: off\ncache: cold\n"), "off.yaml", vocab)
	if err != nil {
		t.Fatal(err)
	}
	if e.QuietStart.Timeout != 0 || e.SteadyState != "off" || e.Cache != "cold" {
		t.Errorf("explicit: quietStart %+v steadyState %q cache %q", e.QuietStart, e.SteadyState, e.Cache)
	}
}

func TestPlacementAgainstTheHost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		add   string
		cpus  int
		want  []string // substrings of the error, every one expected; nil = valid
		count int
	}{
		{"server and client on 2 cpus", "placement: {client: \"1\", server: \"0\"}\n", 2, nil, 0},
		{"too few cpus", "placement: {client: \"0\", server: \"1-3\"}\n", 2,
			[]string{`placement.server: "1-3" names cpu 2-3, which this host does not offer: it has 2 cpus (valid: cpus within 0-1)`}, 1},
		{"overlap and cpuset twice", "placement: {client: \"0-1\", server: \"1\"}\nlimits: {cpuset: \"1\"}\n", 2,
			[]string{`placement.server: "1" shares cpu 1 with placement.client "0-1"`, `placement.server: "1" and limits.cpuset "1" both place the server`}, 2},
		{"duet on 1 cpu", "order: duet\n", 1,
			[]string{`order: duet runs a cell and its baseline at the same time on disjoint cpus, at least one per side, so at least 2 cpus; this host offers 1 (0)`}, 1},
		{"duet on 2 cpus", "order: duet\n", 2, nil, 0},
		{"duet on 8 cpus", "order: duet\n", 8, nil, 0},
		{"duet shared on 2 cpus", "order: duet\nplacement: {duet: shared}\n", 2, nil, 0},
		{"duet shared on 8 cpus", "order: duet\nplacement: {duet: shared}\n", 8, nil, 0},
		{"duet disjoint on 2 cpus", "order: duet\nplacement: {duet: disjoint}\n", 2,
			[]string{`order: placement.duet disjoint gives each side a cpu for its client and at least one for its server, so at least 4 cpus; this host offers 2 (0-1): use placement.duet shared`}, 1},
		{"duet layout unknown", "order: duet\nplacement: {duet: split}\n", 2,
			[]string{`placement.duet: "split" is not a layout (valid: [shared disjoint])`}, 1},
		{"duet layout without a duet", "placement: {duet: shared}\n", 2,
			[]string{`placement.duet: "shared" is the layout of order: duet; this spec's order is "randomized"`}, 1},
		{"duet pinned, one server cpu", "order: duet\nplacement: {client: \"0-1\", server: \"2\"}\n", 8,
			[]string{`splits placement.server between the two sides and needs at least 2 cpus in it; "2" has 1`}, 1},
		{"duet with a tool's client", "order: duet\n" + "workload: {type: sysbench, test: oltp_read_only, duration: 20s}\n", 2,
			[]string{"order: duet runs each side's client as a pinned boxbench agent, which runs only the built-in generator: workload.type sysbench cannot be a duet's client (valid: ycsb)"}, 1},
		{"pairing by rounds", "pairing: rounds\n", 2, nil, 0},
		{"pairing by duets under duet", "order: duet\npairing: duets\n", 2, nil, 0},
		{"pairings that do not fit the order", "order: sequential\npairing: rounds\n", 2,
			[]string{`pairing: rounds needs order: randomized, where every round runs each cell once (order is "sequential"`}, 1},
		{"pairing duets without a duet", "pairing: duets\n", 2,
			[]string{`pairing: duets needs order: duet (order is "randomized")`}, 1},
		{"duet paired by rounds", "order: duet\npairing: rounds\n", 2,
			[]string{`pairing: "rounds" under order: duet, whose runs are compared by duet`}, 1},
		{"pairing unknown", "pairing: blocks\n", 2, []string{`pairing: "blocks" is not`}, 1},
		{"bad quiet start", "quietStart: {cpuBusy: 150%, window: 10ms, timeout: 2h}\n", 2,
			[]string{`"150%" is not a percentage between 0 and 100 (write it like 2%) (field quietStart.cpuBusy)`, "quietStart.window: 10ms is out of range (valid: 200ms to 1m)", "quietStart.timeout: 2h0m0s is too long"}, 3},
		{"bad switches", "steadyState: mser5\ncache: hot\n", 2,
			[]string{`steadyState: "mser5" is not valid`, `cache: "hot" is not valid`}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(good, "limits: {cpus: 1, memory: 2GiB}\n", "", 1) + tc.add
			if strings.Contains(tc.add, "workload:") {
				text = strings.Replace(text, "workload: {type: ycsb, mix: read-heavy, threads: 8, duration: 20s, warmup: 5s}\n", "", 1)
			}
			if !strings.Contains(tc.add, "limits:") {
				text += "limits: {cpus: 1, memory: 2GiB}\n"
			}
			_, err := Parse([]byte(text), "p.yaml", hostVocab(tc.cpus))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if se, ok := err.(*Error); ok && len(se.Problems) != tc.count {
				t.Errorf("%d problems, want %d:\n%v", len(se.Problems), tc.count, err)
			}
		})
	}
}

func TestReplicaKey(t *testing.T) {
	text := strings.Replace(good, "  storage: [bind, overlay]\n", "  replica: [a, b]\n", 1)
	if _, err := Parse([]byte(text), "r.yaml", vocab); err != nil {
		t.Fatal(err)
	}
	text = strings.Replace(good, "  storage: [bind, overlay]\n", "  replica: [a, \"B/1\"]\n", 1)
	_, err := Parse([]byte(text), "r.yaml", vocab)
	if err == nil || !strings.Contains(err.Error(), `"B/1" is not a replica label`) {
		t.Errorf("bad replica label: %v", err)
	}
}
