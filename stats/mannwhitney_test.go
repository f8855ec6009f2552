package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMinUTestP(t *testing.T) {
	tests := []struct {
		n1, n2 int
		want   float64
	}{
		{3, 3, 0.1},     // 2/C(6,3): the 3-vs-3 case that can never reach 0.05
		{4, 4, 2. / 70}, // 0.0286: the smallest equal design that can
		{5, 5, 2. / 252},
		{3, 5, 2. / 56},
		{1, 1, 1}, // 2/C(2,1) = 1
		{2, 2, 1. / 3},
		{0, 5, 1},
		{5, 0, 1},
	}
	for _, tt := range tests {
		if got := MinUTestP(tt.n1, tt.n2); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("MinUTestP(%d, %d) = %v, want %v", tt.n1, tt.n2, got, tt.want)
		}
	}
}

func TestMinRunsForAlpha(t *testing.T) {
	for _, tt := range []struct {
		alpha float64
		want  int
	}{{0.05, 4}, {0.01, 5}, {0.1, 4}, {0.2, 3}, {0, 0}} {
		if got := MinRunsForAlpha(tt.alpha); got != tt.want {
			t.Errorf("MinRunsForAlpha(%v) = %d, want %d", tt.alpha, got, tt.want)
		}
	}
}

func TestMannWhitneyUKnownValues(t *testing.T) {
	tests := []struct {
		name   string
		x, y   []float64
		u, p   float64
		method string
	}{
		// Hand count: pooled ranks 1.5 1.5 3 4 5; U(y) takes 0, 1.5, 1.5,
		// 2.5, 2.5, 3.5, 3.5, 4, 5, 6 over the 10 splits; observed U(y) = 1.5
		// gives P(<=) = 0.3, so p = 0.6. The distribution is asymmetric, the
		// case go-moremath gets wrong (0.4).
		{"asymmetric ties", []float64{3, 0, 2}, []float64{0, 1}, 4.5, 0.6, UTestExact},
		{"separated 3v3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, UTestExact},
		{"identical", []float64{1, 2, 3}, []float64{1, 2, 3}, 4.5, 1, UTestExact},
		{"all equal", []float64{2, 2, 2}, []float64{2, 2}, 3, 1, UTestExact},
		{"one each", []float64{1}, []float64{2}, 0, 1, UTestExact},
		{"all equal large", slices.Repeat([]float64{9}, 40), slices.Repeat([]float64{9}, 40), 800, 1, UTestNormal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MannWhitneyU(tt.x, tt.y)
			if err != nil {
				t.Fatal(err)
			}
			if got.U != tt.u || math.Abs(got.P-tt.p) > 1e-12 || got.Method != tt.method {
				t.Errorf("got U=%v p=%v %s, want U=%v p=%v %s", got.U, got.P, got.Method, tt.u, tt.p, tt.method)
			}
		})
	}
}

// Swapping the samples mirrors U and keeps p; p stays in (0, 1].
func TestMannWhitneyUSymmetry(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		n1, n2 := 1+r.IntN(12), 1+r.IntN(40)
		x, y := make([]float64, n1), make([]float64, n2)
		for j := range x {
			x[j] = float64(r.IntN(6))
		}
		for j := range y {
			y[j] = float64(r.IntN(7))
		}
		a, err1 := MannWhitneyU(x, y)
		b, err2 := MannWhitneyU(y, x)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if a.U+b.U != float64(n1*n2) || math.Abs(a.P-b.P) > 1e-12 || !(a.P > 0 && a.P <= 1) || a.P < a.MinP-1e-15 {
			t.Fatalf("x=%v y=%v: U %v+%v, p %v vs %v, min p %v", x, y, a.U, b.U, a.P, b.P, a.MinP)
		}
	}
}

func TestMannWhitneyUErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		x, y []float64
	}{
		{"empty x", nil, []float64{1}},
		{"empty y", []float64{1}, []float64{}},
		{"NaN", []float64{1, math.NaN()}, []float64{1}},
		{"Inf", []float64{1}, []float64{math.Inf(-1)}},
	} {
		if _, err := MannWhitneyU(tt.x, tt.y); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestMannWhitneyUDoesNotModifyInput(t *testing.T) {
	x, y := []float64{3, 1, 2}, []float64{9, 4}
	if _, err := MannWhitneyU(x, y); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, []float64{3, 1, 2}) || !slices.Equal(y, []float64{9, 4}) {
		t.Errorf("inputs modified: %v %v", x, y)
	}
}
