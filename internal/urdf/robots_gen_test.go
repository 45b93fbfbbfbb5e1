package urdf_test

// Writers of the robot descriptions in urdf/ at the top of the repository.
// The files are committed; TestRobotFiles_UpToDate checks that they equal
// what these functions write, and `go test ./internal/urdf -run
// TestRobotFiles_UpToDate -update` rewrites them. The numbers come from the
// packages whose kinematics the files must match (internal/hexapod,
// internal/velma/kin, internal/sim), and robots_test.go checks the match.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/sim"
)

// writer builds a URDF document.
type writer struct{ b strings.Builder }

func (w *writer) p(format string, a ...any) { fmt.Fprintf(&w.b, format+"\n", a...) }

// num prints a float so that it reads back as the same float64.
func num(f float64) string {
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func nums(fs ...float64) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = num(f)
	}
	return strings.Join(s, " ")
}

func (w *writer) header(name, comment string) {
	w.p(`<?xml version="1.0"?>`)
	w.p(`<!-- %s`, comment)
	w.p(`     Written by internal/urdf/robots_gen_test.go; regenerate with`)
	w.p(`     go test ./internal/urdf -run TestRobotFiles_UpToDate -update -->`)
	w.p(`<robot name="%s">`, name)
}

func (w *writer) materials(ms ...[2]string) {
	for _, m := range ms {
		w.p(`  <material name="%s"><color rgba="%s"/></material>`, m[0], m[1])
	}
}

// visual is one link visual: shape is the inside of <geometry>. A visual
// with a mass also gives the link its inertial (a uniform solid of that
// shape, inertia the principal moments about its centre), and with collide
// its collision, for Gazebo's physics.
type visual struct {
	xyz, rpy [3]float64
	shape    string
	material string
	mass     float64
	inertia  [3]float64
	collide  bool
}

// solidBox and solidSphere are the inertias of uniform solids of mass m.
func solidBox(m, x, y, z float64) [3]float64 {
	return [3]float64{m / 12 * (y*y + z*z), m / 12 * (x*x + z*z), m / 12 * (x*x + y*y)}
}
func solidSphere(m, r float64) [3]float64 { i := 0.4 * m * r * r; return [3]float64{i, i, i} }

func box(x, y, z float64) string { return fmt.Sprintf(`<box size="%s"/>`, nums(x, y, z)) }
func cylinder(r, l float64) string {
	return fmt.Sprintf(`<cylinder radius="%s" length="%s"/>`, num(r), num(l))
}
func sphere(r float64) string         { return fmt.Sprintf(`<sphere radius="%s"/>`, num(r)) }
func at(x, y, z float64) [3]float64   { return [3]float64{x, y, z} }
func turn(r, p, y float64) [3]float64 { return [3]float64{r, p, y} }

func (w *writer) link(name string, vs ...visual) {
	if len(vs) == 0 {
		w.p(`  <link name="%s"/>`, name)
		return
	}
	w.p(`  <link name="%s">`, name)
	for _, v := range vs {
		w.p(`    <visual>`)
		if v.xyz != [3]float64{} || v.rpy != [3]float64{} {
			w.p(`      <origin xyz="%s" rpy="%s"/>`, nums(v.xyz[:]...), nums(v.rpy[:]...))
		}
		w.p(`      <geometry>%s</geometry>`, v.shape)
		w.p(`      <material name="%s"/>`, v.material)
		w.p(`    </visual>`)
	}
	for _, v := range vs {
		origin := ""
		if v.xyz != [3]float64{} || v.rpy != [3]float64{} {
			origin = fmt.Sprintf(`<origin xyz="%s" rpy="%s"/>`, nums(v.xyz[:]...), nums(v.rpy[:]...))
		}
		if v.collide {
			w.p(`    <collision>%s<geometry>%s</geometry></collision>`, origin, v.shape)
		}
		if v.mass > 0 {
			w.p(`    <inertial>%s<mass value="%s"/><inertia ixx="%s" ixy="0" ixz="0" iyy="%s" iyz="0" izz="%s"/></inertial>`,
				origin, num(v.mass), num(v.inertia[0]), num(v.inertia[1]), num(v.inertia[2]))
		}
	}
	w.p(`  </link>`)
}

// joint is one joint; typ "fixed" ignores axis and limits.
type joint struct {
	name, typ, parent, child string
	xyz, rpy                 [3]float64
	axis                     [3]float64
	lower, upper             float64
	effort, velocity         float64
}

func (w *writer) joint(j joint) {
	w.p(`  <joint name="%s" type="%s">`, j.name, j.typ)
	w.p(`    <parent link="%s"/>`, j.parent)
	w.p(`    <child link="%s"/>`, j.child)
	w.p(`    <origin xyz="%s" rpy="%s"/>`, nums(j.xyz[:]...), nums(j.rpy[:]...))
	if j.typ != "fixed" {
		w.p(`    <axis xyz="%s"/>`, nums(j.axis[:]...))
	}
	switch j.typ {
	case "revolute", "prismatic":
		w.p(`    <limit lower="%s" upper="%s" effort="%s" velocity="%s"/>`, num(j.lower), num(j.upper), num(j.effort), num(j.velocity))
	case "continuous":
		w.p(`    <limit effort="%s" velocity="%s"/>`, num(j.effort), num(j.velocity))
	}
	w.p(`  </joint>`)
}

func (w *writer) end() string {
	w.p(`</robot>`)
	return w.b.String()
}

// hexapodURDF describes the hexapod of params/hexapod.yaml. The body frame
// base_link is the frame of the inverse kinematics: x forward, y left, the
// coxa joints in the plane z = 0. Each leg is a chain COXA (about the
// vertical), FEMUR and TIBIA (about the horizontal axis across the leg,
// positive lifting the foot) and a fixed foot at the tibia's end; the
// coxa's zero points the leg along its mounting angle, as hexapod.LegFK.
func hexapodURDF(g hexapod.Geometry) string {
	var w writer
	w.header("hexapod", `The hexapod "Lepta", its body and the coxa, femur and tibia of six legs with the
     geometry of params/hexapod.yaml. Joint names are those of joint_states
     (SERVO_NAMES); limits are the AX-12A's 300 degree range.`)
	w.materials([2]string{"body", "0.25 0.25 0.3 1"}, [2]string{"coxa", "0.8 0.45 0.1 1"},
		[2]string{"femur", "0.9 0.6 0.15 1"}, [2]string{"tibia", "0.3 0.3 0.35 1"}, [2]string{"foot", "0.1 0.1 0.1 1"})
	// Masses for Gazebo: the body with battery and board about 0.9 kg, an
	// AX-12A with its bracket about 50 g per segment; only the body and
	// the feet collide (with the ground when sitting and walking).
	const bodyX, bodyY, bodyZ, bodyMass = 0.28, 0.14, 0.04, 0.9
	w.link("base_link", visual{shape: box(bodyX, bodyY, bodyZ), material: "body",
		mass: bodyMass, inertia: solidBox(bodyMass, bodyX, bodyY, bodyZ), collide: true})
	servo := 150 * math.Pi / 180
	const thick = 0.03
	const coxaMass, femurMass, tibiaMass, footMass, footRadius = 0.05, 0.06, 0.04, 0.01, 0.012
	for i := range hexapod.NumLegs {
		leg := hexapod.LegName(i)
		side := 1.0 // left legs
		if g.CoxaY[i] < 0 {
			side = -1
		}
		w.link("coxa_"+leg, visual{xyz: at(g.CoxaLength/2, 0, 0), shape: box(g.CoxaLength, thick, thick), material: "coxa",
			mass: coxaMass, inertia: solidBox(coxaMass, g.CoxaLength, thick, thick)})
		w.link("femur_"+leg, visual{xyz: at(g.FemurLength/2, 0, 0), shape: box(g.FemurLength, thick*0.8, thick), material: "femur",
			mass: femurMass, inertia: solidBox(femurMass, g.FemurLength, thick*0.8, thick)})
		w.link("tibia_"+leg, visual{xyz: at(g.TibiaLength/2, 0, 0), shape: box(g.TibiaLength, thick*0.6, thick*0.6), material: "tibia",
			mass: tibiaMass, inertia: solidBox(tibiaMass, g.TibiaLength, thick*0.6, thick*0.6)})
		w.link("foot_"+leg, visual{shape: sphere(footRadius), material: "foot",
			mass: footMass, inertia: solidSphere(footMass, footRadius), collide: true})
		// the leg points at yaw side·(π/2 − mount) when the coxa is at 0;
		// a positive coxa angle turns it forward on both sides
		w.joint(joint{name: "COXA_" + leg, typ: "revolute", parent: "base_link", child: "coxa_" + leg,
			xyz: at(g.CoxaX[i], g.CoxaY[i], 0), rpy: turn(0, 0, side*(math.Pi/2-g.InitCoxaAngle[i])),
			axis: at(0, 0, -side), lower: -servo, upper: servo, effort: 1.5, velocity: 6.2})
		w.joint(joint{name: "FEMUR_" + leg, typ: "revolute", parent: "coxa_" + leg, child: "femur_" + leg,
			xyz: at(g.CoxaLength, 0, 0), axis: at(0, -1, 0), lower: -servo, upper: servo, effort: 1.5, velocity: 6.2})
		w.joint(joint{name: "TIBIA_" + leg, typ: "revolute", parent: "femur_" + leg, child: "tibia_" + leg,
			xyz: at(g.FemurLength, 0, 0), axis: at(0, -1, 0), lower: -servo, upper: servo, effort: 1.5, velocity: 6.2})
		w.joint(joint{name: "foot_" + leg + "_joint", typ: "fixed", parent: "tibia_" + leg, child: "foot_" + leg,
			xyz: at(g.TibiaLength, 0, 0)})
	}
	return w.end()
}

// diffbotURDF describes the built-in differential-drive robot (fsmbot of
// internal/sim and worlds/*/fsmbot.sdf) with the REP-105 frames
// base_footprint (on the ground) → base_link (the wheel axle) → laser.
func diffbotURDF() string {
	var w writer
	cfg := sim.DefaultDiffDrive()
	r := sim.WheelRadius
	w.header(sim.ModelName, `The differential-drive robot of diff_drive_sim and worlds/*/fsmbot.sdf,
     with base_footprint on the ground under the axle centre, base_link on the
     axle, the lidar frame laser, two wheels (joint_states of diff_drive_sim)
     and a caster.`)
	w.materials([2]string{"body", "0.2 0.45 0.8 1"}, [2]string{"wheel", "0.1 0.1 0.1 1"},
		[2]string{"laser", "0.85 0.2 0.2 1"}, [2]string{"caster", "0.5 0.5 0.5 1"})
	w.link(sim.FrameBase)
	// the body cylinder of the SDF: 0.1 m tall, its centre 0.06 m above the ground
	w.link(sim.FrameBaseLink, visual{xyz: at(0, 0, 0.06-r), shape: cylinder(cfg.Radius, 0.1), material: "body"})
	w.link(sim.FrameScan, visual{shape: cylinder(0.035, 0.04), material: "laser"})
	w.link("wheel_left", visual{shape: cylinder(r, 0.02), material: "wheel"})
	w.link("wheel_right", visual{shape: cylinder(r, 0.02), material: "wheel"})
	w.link("caster", visual{shape: sphere(0.01), material: "caster"})
	w.joint(joint{name: "base_joint", typ: "fixed", parent: sim.FrameBase, child: sim.FrameBaseLink, xyz: at(0, 0, r)})
	w.joint(joint{name: "laser_joint", typ: "fixed", parent: sim.FrameBaseLink, child: sim.FrameScan, xyz: at(0, 0, sim.LaserHeight-r)})
	// wheel frames: z along the axle pointing left, so a positive angle rolls forward
	w.joint(joint{name: sim.WheelLeftJoint, typ: "continuous", parent: sim.FrameBaseLink, child: "wheel_left",
		xyz: at(0, sim.WheelSeparation/2, 0), rpy: turn(-math.Pi/2, 0, 0), axis: at(0, 0, 1), effort: 1, velocity: 30})
	w.joint(joint{name: sim.WheelRightJoint, typ: "continuous", parent: sim.FrameBaseLink, child: "wheel_right",
		xyz: at(0, -sim.WheelSeparation/2, 0), rpy: turn(-math.Pi/2, 0, 0), axis: at(0, 0, 1), effort: 1, velocity: 30})
	w.joint(joint{name: "caster_joint", typ: "fixed", parent: sim.FrameBaseLink, child: "caster", xyz: at(-0.12, 0, 0.01-r)})
	return w.end()
}

// velmaURDF describes Velma's body as internal/velma/kin models it: the
// torso joint, the nominal arm mounts and two KUKA LWR4+ arms, and the
// pan-tilt head on its nominal (ruler) mount.
func velmaURDF() string {
	var w writer
	w.header("velma", `Velma with its torso, two KUKA LWR4+ arms on the nominal mounts and the pan-tilt
     head, the kinematic chain of internal/velma/kin (world = torso_base).
     Joint names are those of velma_core's joint_states.`)
	w.materials([2]string{"torso", "0.75 0.75 0.78 1"}, [2]string{"arm", "1 0.55 0.1 1"},
		[2]string{"joint", "0.3 0.3 0.32 1"}, [2]string{"head", "0.15 0.15 0.15 1"})
	w.link("world")
	w.link("torso_base", visual{xyz: at(0, 0, 0.015), shape: box(0.6, 0.6, 0.03), material: "torso"})
	w.link("torso_link0",
		visual{xyz: at(-0.05, 0, 0.6), shape: box(0.25, 0.3, 1.14), material: "torso"},
		visual{xyz: at(0, 0, 1.17335), shape: box(0.2, 0.45, 0.16), material: "torso"})
	w.joint(joint{name: "torso_base_joint", typ: "fixed", parent: "world", child: "torso_base"})
	w.joint(joint{name: "torso_0_joint", typ: "revolute", parent: "torso_base", child: "torso_link0",
		xyz: at(0, 0, 0.03), axis: at(0, 0, 1), lower: -1.57, upper: 1.57, effort: 100, velocity: 0.5236})

	// LWR4+: joint origins along the previous link's z, axes, limits (rad, N·m, rad/s)
	offsets := [7]float64{0.11, 0.2005, 0.20, 0.20, 0.20, 0.19, 0.078}
	axes := [7][3]float64{{0, 0, 1}, {0, 1, 0}, {0, 0, 1}, {0, -1, 0}, {0, 0, 1}, {0, 1, 0}, {0, 0, 1}}
	lim := [7]float64{2.96706, 2.0944, 2.96706, 2.0944, 2.96706, 2.0944, 2.96706}
	eff := [7]float64{204, 306, 204, 306, 204, 306, 204}
	vel := [7]float64{1.9199, 1.9199, 2.2689, 2.2689, 2.2689, 3.1416, 3.1416}
	for _, side := range []struct {
		name  string
		pitch float64
	}{{"right", -math.Pi / 3}, {"left", math.Pi / 3}} {
		s := side.name
		base := "calib_" + s + "_arm_base_link"
		w.link(base, visual{xyz: at(0, 0, 0.055), shape: cylinder(0.07, 0.11), material: "joint"})
		w.joint(joint{name: "torso_link0_" + s + "_arm_base_joint", typ: "fixed", parent: "torso_link0", child: base,
			xyz: at(0, 0, 1.17335), rpy: turn(0, side.pitch, math.Pi/2)})
		parent := base
		for i := range 7 {
			child := fmt.Sprintf("%s_arm_%d_link", s, i+1)
			if i < 6 {
				l := offsets[i+1] // this link reaches the next joint
				w.link(child,
					visual{xyz: at(0, 0, l/2), shape: cylinder(0.06, l), material: "arm"},
					visual{shape: sphere(0.065), material: "joint"})
			} else {
				w.link(child, visual{xyz: at(0, 0, -0.01), shape: cylinder(0.04, 0.02), material: "joint"})
			}
			w.joint(joint{name: fmt.Sprintf("%s_arm_%d_joint", s, i), typ: "revolute", parent: parent, child: child,
				xyz: at(0, 0, offsets[i]), axis: axes[i], lower: -lim[i], upper: lim[i], effort: eff[i], velocity: vel[i]})
			parent = child
		}
		w.link(s + "_arm_ee_link")
		w.joint(joint{name: s + "_arm_ee_joint", typ: "fixed", parent: parent, child: s + "_arm_ee_link"})
	}

	w.link("head_base", visual{xyz: at(0, 0, 0.0125), shape: box(0.08, 0.08, 0.025), material: "head"})
	w.link("head_pan_motor", visual{xyz: at(0, 0, 0.031), shape: cylinder(0.03, 0.062), material: "joint"})
	w.link("head_pan_link", visual{xyz: at(0, 0, 0.024), shape: box(0.05, 0.12, 0.048), material: "head"})
	w.link("head_tilt_link_dummy")
	// in head_tilt_link y points up at zero tilt (the original's work-around for KDL)
	w.link("head_tilt_link", visual{xyz: at(0.03, 0.1, 0), shape: box(0.08, 0.2, 0.28), material: "head"})
	w.joint(joint{name: "head_base_joint", typ: "fixed", parent: "torso_link0", child: "head_base", xyz: at(0.0105, 0, 1.3)})
	w.joint(joint{name: "head_pan_motor_joint", typ: "fixed", parent: "head_base", child: "head_pan_motor", xyz: at(0, 0, 0.025)})
	w.joint(joint{name: "head_pan_joint", typ: "revolute", parent: "head_pan_motor", child: "head_pan_link",
		xyz: at(0, 0, 0.062), axis: at(0, 0, 1), lower: -1.57, upper: 1.57, effort: 100, velocity: 1.57})
	w.joint(joint{name: "head_tilt_joint", typ: "revolute", parent: "head_pan_link", child: "head_tilt_link_dummy",
		xyz: at(0, 0, 0.048), axis: at(0, 1, 0), lower: -1.0, upper: 1.3, effort: 100, velocity: 100})
	w.joint(joint{name: "head_tilt_joint_dummy", typ: "fixed", parent: "head_tilt_link_dummy", child: "head_tilt_link",
		rpy: turn(math.Pi/2, 0, 0)})
	return w.end()
}
