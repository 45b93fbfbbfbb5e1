package la

import (
	"fmt"
	"math"
)

// ModalWork holds the scratch matrices of ModalDamping for one size, so the
// control loop can compute damping matrices without allocating. A
// ModalWork is not safe for concurrent use.
type ModalWork struct {
	n                    int
	l, li, a, tmp, u, sq Mat
	d                    Mat
	ev                   []float64
}

// NewModalWork returns scratch space for n×n problems.
func NewModalWork(n int) *ModalWork {
	return &ModalWork{n: n, l: New(n, n), li: New(n, n), a: New(n, n), tmp: New(n, n),
		u: New(n, n), sq: New(n, n), d: New(n, n), ev: make([]float64, n)}
}

// Damping computes the same matrix as ModalDamping into the work space and
// returns it; the result is valid until the next call.
func (w *ModalWork) Damping(k, m Mat, xi, f float64) (Mat, error) {
	n := w.n
	if k.R != n || m.R != n {
		return Mat{}, fmt.Errorf("modal damping: size %d/%d, work space %d", k.R, m.R, n)
	}
	if err := choleskyInto(w.l, m); err != nil {
		return Mat{}, fmt.Errorf("modal damping: inertia: %w", err)
	}
	lowerInvInto(w.li, w.l)
	// a = Li·K·Liᵀ
	mulInto(w.tmp, w.li, k)
	mulABtInto(w.a, w.tmp, w.li)
	symEigenInto(w.a, w.u, w.ev)
	for i := range n {
		for j := range n {
			sum := 0.0
			for e := range n {
				sum += w.u.D[i*n+e] * math.Sqrt(math.Max(0, w.ev[e])) * w.u.D[j*n+e]
			}
			w.sq.D[i*n+j] = sum
		}
	}
	mulInto(w.tmp, w.l, w.sq)
	mulABtInto(w.d, w.tmp, w.l)
	for i := range w.d.D {
		w.d.D[i] *= f * xi
	}
	return w.d, nil
}

// mulInto sets dst = a·b (square, same size, dst distinct from a and b).
func mulInto(dst, a, b Mat) {
	n := a.R
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += a.D[i*n+k] * b.D[k*n+j]
			}
			dst.D[i*n+j] = s
		}
	}
}

// mulABtInto sets dst = a·bᵀ.
func mulABtInto(dst, a, b Mat) {
	n := a.R
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += a.D[i*n+k] * b.D[j*n+k]
			}
			dst.D[i*n+j] = s
		}
	}
}

func choleskyInto(l, a Mat) error {
	n := a.R
	clear(l.D)
	for j := range n {
		s := a.D[j*n+j]
		for k := range j {
			s -= l.D[j*n+k] * l.D[j*n+k]
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("cholesky pivot %d = %g: %w", j, s, ErrNotPositiveDefinite)
		}
		d := math.Sqrt(s)
		l.D[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := a.D[i*n+j]
			for k := range j {
				s -= l.D[i*n+k] * l.D[j*n+k]
			}
			l.D[i*n+j] = s / d
		}
	}
	return nil
}

func lowerInvInto(inv, l Mat) {
	n := l.R
	clear(inv.D)
	for j := range n {
		inv.D[j*n+j] = 1 / l.D[j*n+j]
		for i := j + 1; i < n; i++ {
			s := 0.0
			for k := j; k < i; k++ {
				s -= l.D[i*n+k] * inv.D[k*n+j]
			}
			inv.D[i*n+j] = s / l.D[i*n+i]
		}
	}
}

// symEigenInto diagonalises m in place by cyclic Jacobi rotations, writing
// the eigenvectors (columns) into v and the eigenvalues into ev.
func symEigenInto(m, v Mat, ev []float64) {
	n := m.R
	clear(v.D)
	for i := range n {
		v.D[i*n+i] = 1
	}
	scale := 0.0
	for _, x := range m.D {
		scale += x * x
	}
	for sweep := 0; sweep < 50; sweep++ {
		off := 0.0
		for i := range n {
			for j := i + 1; j < n; j++ {
				off += m.D[i*n+j] * m.D[i*n+j]
			}
		}
		if off <= 1e-26*scale {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				apq := m.D[p*n+q]
				if math.Abs(apq) < 1e-300 {
					continue
				}
				theta := (m.D[q*n+q] - m.D[p*n+p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n {
					akp, akq := m.D[k*n+p], m.D[k*n+q]
					m.D[k*n+p] = c*akp - s*akq
					m.D[k*n+q] = s*akp + c*akq
				}
				for k := range n {
					apk, aqk := m.D[p*n+k], m.D[q*n+k]
					m.D[p*n+k] = c*apk - s*aqk
					m.D[q*n+k] = s*apk + c*aqk
				}
				for k := range n {
					vkp, vkq := v.D[k*n+p], v.D[k*n+q]
					v.D[k*n+p] = c*vkp - s*vkq
					v.D[k*n+q] = s*vkp + c*vkq
				}
			}
		}
	}
	for i := range n {
		ev[i] = m.D[i*n+i]
	}
}

// CholeskyInto is Cholesky writing the factor into l (n×n, preallocated).
func CholeskyInto(l, a Mat) error { return choleskyInto(l, a) }

// SolveCholInto solves L·Lᵀ·x = b into x using y as scratch (both length
// n); x may be the same slice as y.
func SolveCholInto(l Mat, b, y, x []float64) {
	n := l.R
	for i := range n {
		s := b[i]
		for k := range i {
			s -= l.D[i*n+k] * y[k]
		}
		y[i] = s / l.D[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < n; k++ {
			s -= l.D[k*n+i] * x[k]
		}
		x[i] = s / l.D[i*n+i]
	}
}

// InvSPDInto writes the inverse of a symmetric positive definite a into
// inv, using l (n×n) and col (length 2n) as scratch.
func InvSPDInto(inv, a, l Mat, col []float64) error {
	if err := choleskyInto(l, a); err != nil {
		return err
	}
	n := a.R
	e, y := col[:n], col[n:2*n]
	for j := range n {
		clear(e)
		e[j] = 1
		SolveCholInto(l, e, y, y)
		for i := range n {
			inv.D[i*n+j] = y[i]
		}
	}
	return nil
}
