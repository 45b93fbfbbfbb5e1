package velma

import (
	"fmt"
	"math"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
	"github.com/fsmnodes/fsmnodes/internal/velma/la"
)

// updateMass computes both arm mass matrices for the current configuration.
func (c *CS) updateMass() {
	c.mass[0] = c.body.Arm[0].MassMatrix()
	c.mass[1] = c.body.Arm[1].MassMatrix()
}

// jointImpedance adds τ = K·(q_d − q) + D·(q̇_d − q̇) to c.tau, with D the
// modal damping of K and the block-diagonal mass matrix (torso 10 kg·m²,
// arms from the model): D = 2·Qᵀ·diag(ξ·√λ)·Q
// (docs/velma-model.md#joint-impedance).
// Unlike the original (−D·q̇) the damping acts on the velocity error so a
// moving setpoint is tracked without lag.
func (c *CS) jointImpedance(k *[BodyDOF]float64, xi float64, qd, dqd *[BodyDOF]float64) error {
	c.updateMass()
	c.tau[0] += k[0]*(qd[0]-c.q[0]) + 2*xi*math.Sqrt(k[0]*kin.TorsoInertia)*(dqd[0]-c.dq[0])
	for s := range 2 {
		off := 1 + 7*s
		w := &c.jimp[s]
		if w.work == nil {
			w.work, w.k, w.m = la.NewModalWork(ArmDOF), la.New(ArmDOF, ArmDOF), la.New(ArmDOF, ArmDOF)
		}
		for i := range ArmDOF {
			w.k.Set(i, i, k[off+i])
			copy(w.m.D[i*ArmDOF:(i+1)*ArmDOF], c.mass[s][i][:])
		}
		d, err := w.work.Damping(w.k, w.m, xi, 2)
		if err != nil {
			return fmt.Errorf("%v arm joint impedance: %w", kin.Side(s), err)
		}
		for i := range ArmDOF {
			t := k[off+i] * (qd[off+i] - c.q[off+i])
			for j := range ArmDOF {
				t += d.D[i*ArmDOF+j] * (dqd[off+j] - c.dq[off+j])
			}
			c.tau[off+i] += t
		}
	}
	return nil
}

// capsuleJacobian returns the 3×15 linear Jacobian of point p on capsule cp.
func (c *CS) capsuleJacobian(cp *kin.Capsule, p geom.Vec3, out *[3][BodyDOF]float64) {
	*out = [3][BodyDOF]float64{}
	if cp.Link == kin.LinkHead {
		return
	}
	side := cp.Side
	if cp.Link == kin.LinkTorso {
		side = kin.Right
	}
	ch := &c.body.Arm[side]
	j := ch.PointJacobian(cp.Link, p)
	for k := range kin.ChainDOF {
		idx := kin.BodyIndex(side, k)
		for r := range 3 {
			out[r][idx] += j[r][k]
		}
	}
}

// repulse is the collision-repulsion stage (ColDetRep): for every pair
// closer than the activation distance it removes the part of the incoming
// torque that drives the pair together, adds a repulsive torque
// −Jcolᵀ·Fmax·f² (f = (d_a − d)/d_a), and finally applies joint damping.
func (c *CS) repulse() {
	da := c.cfg.RepulseDistance
	var ja, jb [3][BodyDOF]float64
	for _, ct := range c.cbuf {
		pr := c.col.Pairs[ct.Pair]
		c.capsuleJacobian(&c.col.Caps[pr[0]], ct.PA, &ja)
		c.capsuleJacobian(&c.col.Caps[pr[1]], ct.PB, &jb)
		// Jc·q̇ is the approach speed of the pair.
		var jc [BodyDOF]float64
		n2 := 0.0
		for k := range BodyDOF {
			jc[k] += ct.Normal.Dot(geom.Vec3{X: ja[0][k] - jb[0][k], Y: ja[1][k] - jb[1][k], Z: ja[2][k] - jb[2][k]})
			n2 += jc[k] * jc[k]
		}
		if n2 < 1e-12 {
			continue
		}
		f := math.Max(0, math.Min(1, (da-ct.Distance)/da))
		push := 0.0
		for k := range BodyDOF {
			push += jc[k] * c.tau[k]
		}
		if push > 0 {
			for k := range BodyDOF {
				c.tau[k] -= f * jc[k] * push / n2
			}
		}
		fr := c.cfg.RepulseForce * f * f
		for k := range BodyDOF {
			c.tau[k] -= jc[k] * fr / math.Sqrt(n2)
		}
	}
	for k := range BodyDOF {
		c.tau[k] -= c.cfg.RepulseJntDamping[k] * c.dq[k]
	}
}

// cimpAllowed are the cart_imp joint intervals: arm joints 1, 3, 5 must stay
// out of (−0.2, 0.2).
func cimpIntervals(i int) [2]JointLimit {
	l := BodyLimits[i]
	if i > 0 && (i-1)%7%2 == 1 {
		return [2]JointLimit{{l.Lo, -0.2}, {0.2, l.Hi}}
	}
	return [2]JointLimit{l, l}
}

// jointLimits adds the joint-limit avoidance torque of cart_imp
// (docs/velma-model.md#joint-limit-avoidance; its damping term is omitted).
func (c *CS) jointLimits() {
	r := c.cfg.LimitRange
	for i := range BodyDOF {
		iv := cimpIntervals(i)
		q := c.q[i]
		lim := iv[0]
		if q > iv[0].Hi {
			lim = iv[1]
			if q < iv[1].Lo && (iv[1].Lo-q) > (q-iv[0].Hi) {
				lim = iv[0]
			}
		}
		tm := c.cfg.LimitTorque[i]
		var t float64
		switch {
		case q < lim.Lo+r:
			x := math.Min(1, (lim.Lo+r-q)/r)
			t = tm * x * x
		case q > lim.Hi-r:
			x := math.Min(1, (q-(lim.Hi-r))/r)
			t = -tm * x * x
		}
		c.tau[i] += t
	}
}

// cartStep is the Cartesian impedance of both wrists (CImp): for each wrist
// the pose error in the wrist frame, T_err = T⁻¹·T_cmd, gives the spring
// displacement (translation, quaternion vector part), F = K∘p, and the
// damping D_c = Qᵀ·diag(ξ·√λ)·Q of K and Λ = (J·M⁻¹·Jᵀ)⁻¹; τ = Jᵀ(F − D_c·J·q̇).
// Each wrist uses its own 6×8 Jacobian (torso + arm) and mass matrix
// diag(10, M_arm); the coupling of the two wrists through the torso inertia
// is ignored in Λ.
func (c *CS) cartStep() error {
	c.updateMass()
	for s := range 2 {
		w := &c.cart[s]
		ch := &c.body.Arm[s]
		cur := ch.Wrist()
		if w.spline != nil {
			w.setpoint = w.spline.Sample(c.t)
			c.cartTolerances(w, cur)
		}
		errF := cur.Inv().Mul(w.setpoint)
		qe := geom.QuatFromMatrix(errF.R)
		disp := [6]float64{errF.P.X, errF.P.Y, errF.P.Z, qe.X, qe.Y, qe.Z}
		// tool-frame Jacobian: rotate base-frame rows by Rᵀ
		cw := &c.cimp
		if cw.modal == nil {
			cw.init()
		}
		jb := ch.WristJacobian()
		rt := cur.R.T()
		J := cw.j
		for k := range kin.ChainDOF {
			v := rt.MulVec(geom.Vec3{X: jb[0][k], Y: jb[1][k], Z: jb[2][k]})
			o := rt.MulVec(geom.Vec3{X: jb[3][k], Y: jb[4][k], Z: jb[5][k]})
			J.Set(0, k, v.X)
			J.Set(1, k, v.Y)
			J.Set(2, k, v.Z)
			J.Set(3, k, o.X)
			J.Set(4, k, o.Y)
			J.Set(5, k, o.Z)
		}
		// M⁻¹ of diag(torso, arm)
		for a := range ArmDOF {
			copy(cw.mArm.D[a*ArmDOF:(a+1)*ArmDOF], c.mass[s][a][:])
		}
		if err := la.InvSPDInto(cw.aInv, cw.mArm, cw.lArm, cw.col[:2*ArmDOF]); err != nil {
			return fmt.Errorf("%v wrist: arm inertia: %w", kin.Side(s), err)
		}
		// G = J·M⁻¹·Jᵀ, Λ = G⁻¹
		for r := range 6 {
			cw.jm[r][0] = J.At(r, 0) / kin.TorsoInertia
			for b := range ArmDOF {
				t := 0.0
				for a := range ArmDOF {
					t += J.At(r, 1+a) * cw.aInv.At(a, b)
				}
				cw.jm[r][1+b] = t
			}
		}
		for r := range 6 {
			for q := range 6 {
				t := 0.0
				for k := range kin.ChainDOF {
					t += cw.jm[r][k] * J.At(q, k)
				}
				cw.g.Set(r, q, t)
			}
		}
		if err := la.InvSPDInto(cw.lam, cw.g, cw.l6, cw.col[:12]); err != nil {
			return fmt.Errorf("%v wrist: singular operational-space inertia: %w", kin.Side(s), err)
		}
		xi := 0.0
		for i := range 6 {
			cw.kc.Set(i, i, w.k[i])
			xi += w.xi[i]
		}
		xi /= 6
		dc, err := cw.modal.Damping(cw.kc, cw.lam, xi, 1)
		if err != nil {
			return fmt.Errorf("%v wrist damping: %w", kin.Side(s), err)
		}
		var xd [6]float64
		for r := range 6 {
			for k := range kin.ChainDOF {
				xd[r] += J.At(r, k) * c.dq[kin.BodyIndex(kin.Side(s), k)]
			}
		}
		var f [6]float64
		for r := range 6 {
			fd := 0.0
			for q := range 6 {
				fd += dc.At(r, q) * xd[q]
			}
			f[r] = w.k[r]*disp[r] - fd
		}
		for k := range kin.ChainDOF {
			t := 0.0
			for r := range 6 {
				t += J.At(r, k) * f[r]
			}
			c.tau[kin.BodyIndex(kin.Side(s), k)] += t
		}
	}
	return nil
}

// cartImpWork is the scratch space of cartStep.
type cartImpWork struct {
	j                la.Mat // 6×8 wrist-frame Jacobian
	jm               [6][kin.ChainDOF]float64
	mArm, lArm, aInv la.Mat // 7×7
	g, lam, l6, kc   la.Mat // 6×6
	col              []float64
	modal            *la.ModalWork
}

func (w *cartImpWork) init() {
	w.j = la.New(6, kin.ChainDOF)
	w.mArm, w.lArm, w.aInv = la.New(ArmDOF, ArmDOF), la.New(ArmDOF, ArmDOF), la.New(ArmDOF, ArmDOF)
	w.g, w.lam, w.l6, w.kc = la.New(6, 6), la.New(6, 6), la.New(6, 6), la.New(6, 6)
	w.col = make([]float64, 2*ArmDOF)
	w.modal = la.NewModalWork(6)
}

// cartTolerances checks a wrist's path and goal tolerances.
func (c *CS) cartTolerances(w *cartWrist, cur kin.Frame) {
	if w.status.State != TrajActive {
		return
	}
	exceeds := func(tol CartTolerance, target kin.Frame) bool {
		return (tol.Position > 0 && target.P.Sub(cur.P).Norm() > tol.Position) ||
			(tol.Rotation > 0 && geom.AngleBetween(target.R, cur.R) > tol.Rotation)
	}
	end := w.spline.End()
	if c.t < end {
		if exceeds(w.path, w.setpoint) {
			w.status.State = TrajPathViolated
			w.spline = nil
			w.setpoint = cur
		}
		return
	}
	if !exceeds(w.goal, w.spline.Goal()) {
		w.status.State = TrajSucceeded
	} else if c.t > end+w.goalTime {
		w.status.State = TrajGoalViolated
	}
}
