// Package la holds the small dense linear algebra the Velma controllers need:
// row-major square and rectangular matrices of float64, Cholesky
// factorisation, a symmetric Jacobi eigen-solver and the matrix functions
// built on them (inverse, square root of a symmetric positive matrix and the
// damping matrix of a stiffness/inertia pair).
//
// Sizes here are tiny (at most 15×15), so everything is written for clarity
// and for zero heap allocation in the 500 Hz loop where the caller provides
// the output storage.
package la

import (
	"errors"
	"fmt"
)

// Mat is a dense row-major matrix.
type Mat struct {
	R, C int
	D    []float64
}

// ErrNotPositiveDefinite is returned when a Cholesky factorisation meets a
// non-positive pivot.
var ErrNotPositiveDefinite = errors.New("matrix is not positive definite")

// New returns an r×c zero matrix.
func New(r, c int) Mat { return Mat{R: r, C: c, D: make([]float64, r*c)} }

// At returns element (i, j).
func (m Mat) At(i, j int) float64 { return m.D[i*m.C+j] }

// Set sets element (i, j).
func (m Mat) Set(i, j int, v float64) { m.D[i*m.C+j] = v }

// Clone returns a deep copy.
func (m Mat) Clone() Mat {
	c := Mat{R: m.R, C: m.C, D: make([]float64, len(m.D))}
	copy(c.D, m.D)
	return c
}

// Mul returns a·b.
func Mul(a, b Mat) Mat {
	if a.C != b.R {
		panic(fmt.Sprintf("la.Mul: %dx%d · %dx%d", a.R, a.C, b.R, b.C))
	}
	out := New(a.R, b.C)
	for i := range a.R {
		for k := range a.C {
			aik := a.D[i*a.C+k]
			if aik == 0 {
				continue
			}
			for j := range b.C {
				out.D[i*b.C+j] += aik * b.D[k*b.C+j]
			}
		}
	}
	return out
}

// T returns the transpose.
func (m Mat) T() Mat {
	out := New(m.C, m.R)
	for i := range m.R {
		for j := range m.C {
			out.D[j*m.R+i] = m.D[i*m.C+j]
		}
	}
	return out
}

// MulVec returns m·v.
func (m Mat) MulVec(v []float64) []float64 {
	out := make([]float64, m.R)
	for i := range m.R {
		s := 0.0
		for j := range m.C {
			s += m.D[i*m.C+j] * v[j]
		}
		out[i] = s
	}
	return out
}

// MulTVec returns mᵀ·v.
func (m Mat) MulTVec(v []float64) []float64 {
	out := make([]float64, m.C)
	for i := range m.R {
		for j := range m.C {
			out[j] += m.D[i*m.C+j] * v[i]
		}
	}
	return out
}

// Cholesky returns the lower-triangular L with L·Lᵀ = a for a symmetric
// positive definite a.
func Cholesky(a Mat) (Mat, error) {
	l := New(a.R, a.R)
	if err := choleskyInto(l, a); err != nil {
		return Mat{}, err
	}
	return l, nil
}

// SolveChol solves L·Lᵀ·x = b given the Cholesky factor L.
func SolveChol(l Mat, b []float64) []float64 {
	n := l.R
	y := make([]float64, n)
	for i := range n {
		s := b[i]
		for k := range i {
			s -= l.D[i*n+k] * y[k]
		}
		y[i] = s / l.D[i*n+i]
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < n; k++ {
			s -= l.D[k*n+i] * x[k]
		}
		x[i] = s / l.D[i*n+i]
	}
	return x
}

// InvSPD returns the inverse of a symmetric positive definite matrix.
func InvSPD(a Mat) (Mat, error) {
	l, err := Cholesky(a)
	if err != nil {
		return Mat{}, err
	}
	n := a.R
	inv := New(n, n)
	e := make([]float64, n)
	for j := range n {
		clear(e)
		e[j] = 1
		x := SolveChol(l, e)
		for i := range n {
			inv.D[i*n+j] = x[i]
		}
	}
	return inv, nil
}

// SymEigen returns the eigenvalues and the eigenvectors (as columns of an
// orthogonal matrix) of a symmetric matrix, by cyclic Jacobi rotations.
func SymEigen(a Mat) ([]float64, Mat) {
	m, v, ev := a.Clone(), New(a.R, a.R), make([]float64, a.R)
	symEigenInto(m, v, ev)
	return ev, v
}

// ModalDamping returns D = f·L·√(L⁻¹·K·L⁻ᵀ)·Lᵀ·ξ where L·Lᵀ = M, which is the
// damping matrix Qᵀ·diag(f·ξ·√λ)·Q of the generalised eigenproblem
// K·v = λ·M·v with eigenvectors normalised to Vᵀ·M·V = I and Q = V⁻¹.
// Joint impedance uses f = 2, Cartesian impedance f = 1. K must be symmetric
// positive semi-definite and M symmetric positive definite.
func ModalDamping(k, m Mat, xi, f float64) (Mat, error) {
	d, err := NewModalWork(m.R).Damping(k, m, xi, f)
	if err != nil {
		return Mat{}, err
	}
	return d.Clone(), nil
}
