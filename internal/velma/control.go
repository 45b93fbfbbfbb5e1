package velma

import (
	"fmt"
	"math"

	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
	"github.com/fsmnodes/fsmnodes/internal/velma/la"
)

// armMat converts an arm mass matrix.
func armMat(m *kin.ArmMass) la.Mat {
	a := la.New(ArmDOF, ArmDOF)
	for i := range ArmDOF {
		copy(a.D[i*ArmDOF:(i+1)*ArmDOF], m[i][:])
	}
	return a
}

// updateMass computes both arm mass matrices for the current configuration.
func (c *CS) updateMass() {
	c.mass[0] = c.body.Arm[0].MassMatrix()
	c.mass[1] = c.body.Arm[1].MassMatrix()
}

// jointImpedance adds τ = K·(q_d − q) + D·(q̇_d − q̇) to c.tau, with D the
// modal damping of K and the block-diagonal mass matrix (torso 10 kg·m²,
// arms from the model): D = 2·Qᵀ·diag(ξ·√λ)·Q (velma-kinematics.md §5.2).
// Unlike the original (−D·q̇) the damping acts on the velocity error so a
// moving setpoint is tracked without lag.
func (c *CS) jointImpedance(k *[BodyDOF]float64, xi float64, qd, dqd *[BodyDOF]float64) error {
	c.updateMass()
	c.tau[0] += k[0]*(qd[0]-c.q[0]) + 2*xi*math.Sqrt(k[0]*kin.TorsoInertia)*(dqd[0]-c.dq[0])
	for s := range 2 {
		off := 1 + 7*s
		km := la.New(ArmDOF, ArmDOF)
		for i := range ArmDOF {
			km.Set(i, i, k[off+i])
		}
		d, err := la.ModalDamping(km, armMat(&c.mass[s]), xi, 2)
		if err != nil {
			return fmt.Errorf("%v arm joint impedance: %w", kin.Side(s), err)
		}
		var ev [ArmDOF]float64
		for i := range ArmDOF {
			ev[i] = dqd[off+i] - c.dq[off+i]
		}
		dv := d.MulVec(ev[:])
		for i := range ArmDOF {
			c.tau[off+i] += k[off+i]*(qd[off+i]-c.q[off+i]) + dv[i]
		}
	}
	return nil
}

// capsuleJacobian returns the 3×15 linear Jacobian of point p on capsule cp.
func (c *CS) capsuleJacobian(cp *kin.Capsule, p kin.Vec3, out *[3][BodyDOF]float64) {
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
			for r := range 3 {
				jc[k] += ct.Normal[r] * (ja[r][k] - jb[r][k])
			}
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
// (velma-kinematics.md §5.4; its damping term is omitted).
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
		qe := kin.QuatFromMat(errF.R)
		disp := [6]float64{errF.P[0], errF.P[1], errF.P[2], qe.X, qe.Y, qe.Z}
		// tool-frame Jacobian: rotate base-frame rows by Rᵀ
		jb := ch.WristJacobian()
		rt := cur.R.T()
		j := la.New(6, kin.ChainDOF)
		for k := range kin.ChainDOF {
			v := rt.MulVec(kin.Vec3{jb[0][k], jb[1][k], jb[2][k]})
			o := rt.MulVec(kin.Vec3{jb[3][k], jb[4][k], jb[5][k]})
			for r := range 3 {
				j.Set(r, k, v[r])
				j.Set(3+r, k, o[r])
			}
		}
		// M⁻¹ of diag(torso, arm)
		minv := la.New(kin.ChainDOF, kin.ChainDOF)
		minv.Set(0, 0, 1/kin.TorsoInertia)
		ai, err := la.InvSPD(armMat(&c.mass[s]))
		if err != nil {
			return fmt.Errorf("%v wrist: arm inertia: %w", kin.Side(s), err)
		}
		for a := range ArmDOF {
			for b := range ArmDOF {
				minv.Set(1+a, 1+b, ai.At(a, b))
			}
		}
		g := la.Mul(la.Mul(j, minv), j.T())
		lambda, err := la.InvSPD(g)
		if err != nil {
			return fmt.Errorf("%v wrist: singular operational-space inertia: %w", kin.Side(s), err)
		}
		kc := la.New(6, 6)
		for i := range 6 {
			kc.Set(i, i, w.k[i])
		}
		xi := 0.0
		for i := range 6 {
			xi += w.xi[i]
		}
		xi /= 6
		dc, err := la.ModalDamping(kc, lambda, xi, 1)
		if err != nil {
			return fmt.Errorf("%v wrist damping: %w", kin.Side(s), err)
		}
		var dq8 [kin.ChainDOF]float64
		for k := range kin.ChainDOF {
			dq8[k] = c.dq[kin.BodyIndex(kin.Side(s), k)]
		}
		xd := j.MulVec(dq8[:])
		fd := dc.MulVec(xd)
		var f [6]float64
		for i := range 6 {
			f[i] = w.k[i]*disp[i] - fd[i]
		}
		tq := j.MulTVec(f[:])
		for k := range kin.ChainDOF {
			c.tau[kin.BodyIndex(kin.Side(s), k)] += tq[k]
		}
	}
	return nil
}

// cartTolerances checks a wrist's path and goal tolerances.
func (c *CS) cartTolerances(w *cartWrist, cur kin.Frame) {
	if w.status.State != TrajActive {
		return
	}
	exceeds := func(tol CartTolerance, target kin.Frame) bool {
		return (tol.Position > 0 && target.P.Sub(cur.P).Norm() > tol.Position) ||
			(tol.Rotation > 0 && kin.AngleBetween(target.R, cur.R) > tol.Rotation)
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
