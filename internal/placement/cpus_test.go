package placement

import (
	"slices"
	"strings"
	"testing"
)

func TestParseAndFormatList(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "0-3": "0-3", "3,0-1": "0-1,3", "0,2,4-5,1": "0-2,4-5"} {
		cpus, err := ParseList(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := FormatList(cpus); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{"", "x", "3-1", "1-", "-1", "9999"} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("ParseList(%q): no error", bad)
		}
	}
}

// hostOf fakes a host with n cpus.
func hostOf(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestCheckPlacement(t *testing.T) {
	cases := []struct {
		name                       string
		client, server, neighbours string
		host                       int
		want                       []string // one substring per problem, in order; nil = valid
	}{
		{name: "disjoint on 2", client: "1", server: "0", host: 2},
		{name: "three roles on 4", client: "0", server: "1-2", neighbours: "3", host: 4},
		{name: "too few cpus", client: "1", server: "2-3", host: 2,
			want: []string{`placement.server: "2-3" names cpu 2-3, which this host does not offer: it has 2 cpus (valid: cpus within 0-1)`}},
		{name: "overlap", client: "0-1", server: "1", host: 2,
			want: []string{`placement.server: "1" shares cpu 1 with placement.client "0-1"`}},
		{name: "server without client", server: "1", host: 2,
			want: []string{`placement.server: needs placement.client too`}},
		{name: "all at once", client: "x", server: "5", neighbours: "5", host: 2,
			want: []string{`placement.client: "x" is not a cpu list`, `placement.server: "5" names cpu 5`,
				`placement.neighbours: "5" names cpu 5`, `placement.neighbours: "5" shares cpu 5 with placement.server`}},
		{name: "no host known", client: "0", server: "7", host: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var host []int
			if tc.host >= 0 {
				host = hostOf(tc.host)
			}
			_, problems := Check(tc.client, tc.server, tc.neighbours, host)
			var got []string
			for _, p := range problems {
				got = append(got, p.Field+": "+p.Message)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d: %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestDuet(t *testing.T) {
	// One cpu: refused, with the count needed and the count there is.
	_, _, err := Duet(Sets{}, hostOf(1), "")
	if err == nil || !strings.Contains(err.Error(), "at least 2 cpus; this host offers 1 (0)") {
		t.Errorf("1 cpu: %v", err)
	}
	// This host's size and 3: one cpu per side, shared by its client and server.
	for _, n := range []int{2, 3} {
		a, b, err := Duet(Sets{}, hostOf(n), "")
		if err != nil || !slices.Equal(a.Server, []int{0}) || !slices.Equal(a.Client, []int{0}) ||
			!slices.Equal(b.Server, []int{1}) || !slices.Equal(b.Client, []int{1}) || !a.Shared() || !b.Shared() {
			t.Errorf("%d cpus: A %+v B %+v %v", n, a, b, err)
		}
		if a.String() != "server and client share cpus 0" {
			t.Errorf("%d cpus: %q", n, a.String())
		}
	}
	// 8 cpus, unpinned: halves, the client on each half's first cpu.
	a, b, err := Duet(Sets{}, hostOf(8), "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Client, []int{0}) || !slices.Equal(a.Server, []int{1, 2, 3}) ||
		!slices.Equal(b.Client, []int{4}) || !slices.Equal(b.Server, []int{5, 6, 7}) {
		t.Errorf("8 cpus: A %+v B %+v", a, b)
	}
	if a.Shared() || a.String() != "server cpus 1-3, client cpus 0" {
		t.Errorf("8 cpus: side A %q", a.String())
	}
	// Pinned: each list halved; the sides are disjoint.
	a, b, err = Duet(Sets{Client: []int{0, 1}, Server: []int{2, 3, 4, 5}}, hostOf(6), "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Client, []int{0}) || !slices.Equal(b.Client, []int{1}) ||
		!slices.Equal(a.Server, []int{2, 3}) || !slices.Equal(b.Server, []int{4, 5}) {
		t.Errorf("pinned: A %+v B %+v", a, b)
	}
	if _, _, err := Duet(Sets{Client: []int{1}, Server: []int{0}}, hostOf(2), ""); err == nil ||
		!strings.Contains(err.Error(), `placement.server between the two sides and needs at least 2 cpus in it; "0" has 1`) {
		t.Errorf("pinned on 2 cpus: %v", err)
	}
	// The layout is explicit when given: shared on 8 cpus halves them, each half shared by its
	// server and client; disjoint on 2 cpus is refused with the count it needs.
	a, b, err = Duet(Sets{}, hostOf(8), DuetShared)
	if err != nil || !slices.Equal(a.Server, []int{0, 1, 2, 3}) || !slices.Equal(a.Client, a.Server) ||
		!slices.Equal(b.Server, []int{4, 5, 6, 7}) || a.Layout != DuetShared || b.Layout != DuetShared {
		t.Errorf("8 cpus shared: A %+v B %+v %v", a, b, err)
	}
	if a, _, _ := Duet(Sets{}, hostOf(2), ""); a.Layout != DuetShared {
		t.Errorf("2 cpus chose %q", a.Layout)
	}
	if a, _, _ := Duet(Sets{}, hostOf(4), ""); a.Layout != DuetDisjoint {
		t.Errorf("4 cpus chose %q", a.Layout)
	}
	if _, _, err := Duet(Sets{}, hostOf(2), DuetDisjoint); err == nil ||
		!strings.Contains(err.Error(), "at least 4 cpus; this host offers 2 (0-1): use placement.duet shared") {
		t.Errorf("disjoint on 2 cpus: %v", err)
	}
	if _, _, err := Duet(Sets{Client: []int{0, 1}, Server: []int{2, 3}}, hostOf(4), DuetShared); err == nil ||
		!strings.Contains(err.Error(), "placement.duet disjoint") {
		t.Errorf("shared with placed server and client: %v", err)
	}
	if _, _, err := Duet(Sets{}, hostOf(2), "both"); err == nil || !strings.Contains(err.Error(), `"both" is not a layout`) {
		t.Errorf("unknown layout: %v", err)
	}
	if _, _, err := Duet(Sets{Client: []int{0, 1}, Server: []int{2, 3}, Neighbours: []int{4}}, hostOf(6), ""); err == nil ||
		!strings.Contains(err.Error(), "neighbours") {
		t.Errorf("with neighbours: %v", err)
	}
}
