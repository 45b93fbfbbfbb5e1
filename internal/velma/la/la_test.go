package la

import (
	"math"
	"testing"
)

func approx(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestCholesky_SPD_ReconstructsInput(t *testing.T) {
	a := Mat{R: 3, C: 3, D: []float64{4, 2, 0.4, 2, 5, 1, 0.4, 1, 3}}
	l, err := Cholesky(a)
	if err != nil {
		t.Fatal(err)
	}
	back := Mul(l, l.T())
	for i := range a.D {
		if !approx(back.D[i], a.D[i], 1e-12) {
			t.Fatalf("L·Lᵀ[%d] = %g, want %g", i, back.D[i], a.D[i])
		}
	}
	inv, err := InvSPD(a)
	if err != nil {
		t.Fatal(err)
	}
	id := Mul(a, inv)
	for i := range 3 {
		for j := range 3 {
			want := 0.0
			if i == j {
				want = 1
			}
			if !approx(id.At(i, j), want, 1e-12) {
				t.Fatalf("A·A⁻¹(%d,%d) = %g", i, j, id.At(i, j))
			}
		}
	}
}

func TestCholesky_Indefinite_Error(t *testing.T) {
	a := Mat{R: 2, C: 2, D: []float64{1, 2, 2, 1}}
	if _, err := Cholesky(a); err == nil {
		t.Fatal("want error for indefinite matrix")
	}
	if _, err := Cholesky(Mat{R: 1, C: 1, D: []float64{math.NaN()}}); err == nil {
		t.Fatal("want error for NaN")
	}
}

func TestSymEigen_DiagonalisesAndIsOrthogonal(t *testing.T) {
	a := Mat{R: 3, C: 3, D: []float64{2, 1, 0, 1, 2, 1, 0, 1, 2}}
	ev, v := SymEigen(a)
	// A·v_i = λ_i·v_i
	for e := range 3 {
		col := []float64{v.At(0, e), v.At(1, e), v.At(2, e)}
		av := a.MulVec(col)
		for i := range 3 {
			if !approx(av[i], ev[e]*col[i], 1e-10) {
				t.Fatalf("eigenpair %d wrong: %v vs %g·%v", e, av, ev[e], col)
			}
		}
	}
	vt := Mul(v.T(), v)
	for i := range 3 {
		if !approx(vt.At(i, i), 1, 1e-12) {
			t.Fatal("eigenvectors not orthonormal")
		}
	}
}

func TestModalDamping_ScalarCase_CriticalDamping(t *testing.T) {
	// 1 DOF: D = f·ξ·√(k·m)
	k := Mat{R: 1, C: 1, D: []float64{200}}
	m := Mat{R: 1, C: 1, D: []float64{0.5}}
	d, err := ModalDamping(k, m, 0.7, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * 0.7 * math.Sqrt(100); !approx(d.D[0], want, 1e-9) {
		t.Fatalf("D = %g, want %g", d.D[0], want)
	}
}

func TestModalDamping_DiagonalisesInModalCoordinates(t *testing.T) {
	k := Mat{R: 2, C: 2, D: []float64{100, 0, 0, 400}}
	m := Mat{R: 2, C: 2, D: []float64{2, 0.5, 0.5, 1}}
	d, err := ModalDamping(k, m, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !approx(d.At(0, 1), d.At(1, 0), 1e-9) {
		t.Fatal("D not symmetric")
	}
	// D·M⁻¹·K must be symmetric when D is a function of (K, M) in modal form:
	// check D·M⁻¹·D ≈ 4·K (since D = 2·L·√A·Lᵀ → D·M⁻¹·D = 4·L·A·Lᵀ = 4K).
	mi, _ := InvSPD(m)
	x := Mul(Mul(d, mi), d)
	for i := range 4 {
		if !approx(x.D[i], 4*k.D[i], 1e-6) {
			t.Fatalf("D·M⁻¹·D = %v, want 4K", x.D)
		}
	}
}

func TestWorkVariants_MatchAllocatingOnes(t *testing.T) {
	a := Mat{R: 3, C: 3, D: []float64{4, 2, 0.4, 2, 5, 1, 0.4, 1, 3}}
	inv, _ := InvSPD(a)
	got, l, col := New(3, 3), New(3, 3), make([]float64, 6)
	if err := InvSPDInto(got, a, l, col); err != nil {
		t.Fatal(err)
	}
	for i := range inv.D {
		if !approx(inv.D[i], got.D[i], 1e-12) {
			t.Fatalf("InvSPDInto %v, want %v", got.D, inv.D)
		}
	}
	k := Mat{R: 3, C: 3, D: []float64{100, 0, 0, 0, 50, 0, 0, 0, 10}}
	d1, _ := ModalDamping(k, a, 0.7, 2)
	w := NewModalWork(3)
	for range 2 { // reuse must give the same answer
		d2, err := w.Damping(k, a, 0.7, 2)
		if err != nil {
			t.Fatal(err)
		}
		for i := range d1.D {
			if !approx(d1.D[i], d2.D[i], 1e-12) {
				t.Fatal("ModalWork.Damping differs from ModalDamping")
			}
		}
	}
	if _, err := w.Damping(New(2, 2), a, 1, 1); err == nil {
		t.Fatal("size mismatch accepted")
	}
}
