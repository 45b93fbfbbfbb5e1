package ros2

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/urdf"
)

// tf2Answer is what testdata/tf2_lookup.py printed: a real tf2 buffer's
// lookups at the stamp of one joint_states or odom message, with that
// message and the robot_description it took.
type tf2Answer struct {
	RobotDescription string             `json:"robot_description"`
	Stamp            [2]int64           `json:"stamp"`
	Joints           map[string]float64 `json:"joints"`
	Odom             *struct {
		P [3]float64 `json:"p"`
		Q [4]float64 `json:"q"`
	} `json:"odom"`
	Lookups []struct {
		Target string     `json:"target"`
		Source string     `json:"source"`
		T      [3]float64 `json:"t"`
		Q      [4]float64 `json:"q"`
	} `json:"lookups"`
}

// tf2Lookup runs testdata/tf2_lookup.py against the robot in ns: a real
// tf2_ros_py buffer on ns's TF topics looks up each "target:source" pair at
// the stamp of a stampFrom message ("joint_states" or "odom"). It may run on
// any goroutine; an error says what went wrong.
func (d *dom) tf2Lookup(ns, stampFrom string, pairs ...string) (*tf2Answer, error) {
	argv := append([]string{"/usr/bin/python3", filepath.Join(peer.repo, "test/ros2/testdata/tf2_lookup.py"), ns, stampFrom}, pairs...)
	out, err := d.runErr(d.rosEnv(), argv...)
	if err != nil {
		return nil, fmt.Errorf("tf2_lookup.py %s: %v\n%s", ns, err, out)
	}
	i := strings.Index(out, "{")
	if i < 0 {
		return nil, fmt.Errorf("tf2_lookup.py %s printed no JSON:\n%s", ns, out)
	}
	var a tf2Answer
	if err := json.NewDecoder(strings.NewReader(out[i:])).Decode(&a); err != nil {
		return nil, fmt.Errorf("tf2_lookup.py %s: %v\n%s", ns, err, out)
	}
	if len(a.Lookups) != len(pairs) {
		return nil, fmt.Errorf("tf2_lookup.py %s: %d lookups for %d pairs", ns, len(a.Lookups), len(pairs))
	}
	return &a, nil
}

// tf2Tolerance is how closely tf2's lookups must agree with our forward
// kinematics (metres, and quaternion components).
const tf2Tolerance = 1e-6

// tfDiff returns the largest difference between two transforms: the
// translation components, and the quaternion components with the sign
// that makes them closest (q and -q are the same rotation).
func tfDiff(a, b urdf.Transform) float64 {
	d := 0.0
	dt := a.Translation.Sub(b.Translation)
	for _, v := range []float64{dt.X, dt.Y, dt.Z} {
		d = math.Max(d, math.Abs(v))
	}
	qa := [4]float64{a.Rotation.X, a.Rotation.Y, a.Rotation.Z, a.Rotation.W}
	qb := [4]float64{b.Rotation.X, b.Rotation.Y, b.Rotation.Z, b.Rotation.W}
	same, flipped := 0.0, 0.0
	for i := range 4 {
		same = math.Max(same, math.Abs(qa[i]-qb[i]))
		flipped = math.Max(flipped, math.Abs(qa[i]+qb[i]))
	}
	return math.Max(d, math.Min(same, flipped))
}

func toTransform(t [3]float64, q [4]float64) urdf.Transform {
	return urdf.Transform{Translation: geom.Vec3{X: t[0], Y: t[1], Z: t[2]}, Rotation: geom.Quat{X: q[0], Y: q[1], Z: q[2], W: q[3]}}
}

// checkTF2 has a real tf2 buffer look up each robot's frames in the demo
// and compares them with our own forward kinematics of the same instant:
// the hexapod's feet and Velma's wrists from the URDF the robot publishes
// and the joint positions of the joint_states message whose stamp tf2 was
// asked for; the diffbot's base from its odometry message. Each robot runs
// on its own goroutine (a Python start and a TF wait each).
func (d *dom) checkTF2() {
	t := d.t
	t.Helper()
	feet := []string{}
	for _, leg := range []string{"LF", "LM", "LR", "RF", "RM", "RR"} {
		feet = append(feet, "base_link:foot_"+leg)
	}
	type job struct {
		ns, from string
		pairs    []string
	}
	jobs := []job{
		{"/hexapod", "joint_states", feet},
		{"/velma", "joint_states", []string{"world:left_arm_7_link", "world:right_arm_7_link"}},
		{"/diffbot", "odom", []string{"odom:base_footprint", "map:odom", "map:base_link"}},
	}
	type result struct {
		j   job
		a   *tf2Answer
		err error
	}
	results := make(chan result, len(jobs))
	for _, j := range jobs {
		go func() {
			a, err := d.tf2Lookup(j.ns, j.from, j.pairs...)
			results <- result{j, a, err}
		}()
	}
	for range jobs {
		r := <-results
		if r.err != nil {
			t.Errorf("tf2 on %s: %v", r.j.ns, r.err)
			continue
		}
		m, err := urdf.Parse([]byte(r.a.RobotDescription))
		if err != nil {
			t.Errorf("%s/robot_description: %v", r.j.ns, err)
			continue
		}
		checked := 0
		for _, l := range r.a.Lookups {
			got := toTransform(l.T, l.Q)
			var want urdf.Transform
			switch {
			case r.j.from == "joint_states":
				if l.Target != m.Root {
					t.Errorf("%s: lookup target %s is not the URDF root %s", r.j.ns, l.Target, m.Root)
					continue
				}
				want, err = m.FK(l.Source, r.a.Joints)
			case l.Target == "odom" && l.Source == "base_footprint":
				want = toTransform(r.a.Odom.P, r.a.Odom.Q)
			case l.Target == "map" && l.Source == "base_link":
				// map→odom (as tf2 found it) · the odometry · the URDF's
				// base_footprint→base_link.
				mapOdom := toTransform(r.a.Lookups[1].T, r.a.Lookups[1].Q)
				var fp urdf.Transform
				fp, err = m.FK(l.Source, map[string]float64{})
				want = mapOdom.Mul(toTransform(r.a.Odom.P, r.a.Odom.Q)).Mul(fp)
			default:
				continue // map→odom: an input above
			}
			if err != nil {
				t.Errorf("%s: our FK of %s: %v", r.j.ns, l.Source, err)
				continue
			}
			if diff := tfDiff(got, want); diff > tf2Tolerance || math.IsNaN(diff) {
				t.Errorf("%s: tf2 %s→%s = %+v, our kinematics %+v (differ by %g)", r.j.ns, l.Target, l.Source, got, want, diff)
			}
			checked++
		}
		t.Logf("tf2 (tf2_ros_py) on %s at stamp %d.%09d agrees with our kinematics to %g on %d transforms", r.j.ns,
			r.a.Stamp[0], r.a.Stamp[1], tf2Tolerance, checked)
	}
}

// The comparison itself must be able to fail: a transform off by more than
// the tolerance, in translation or rotation, differs; q and -q do not.
func TestTFDiff(t *testing.T) {
	a := toTransform([3]float64{1, 2, 3}, [4]float64{0, 0, math.Sqrt2 / 2, math.Sqrt2 / 2})
	if d := tfDiff(a, toTransform([3]float64{1, 2, 3}, [4]float64{0, 0, -math.Sqrt2 / 2, -math.Sqrt2 / 2})); d > 1e-12 {
		t.Errorf("q and -q differ by %g", d)
	}
	if d := tfDiff(a, toTransform([3]float64{1, 2, 3.00001}, [4]float64{0, 0, math.Sqrt2 / 2, math.Sqrt2 / 2})); d <= tf2Tolerance {
		t.Errorf("10 µm off: differ by only %g", d)
	}
	if d := tfDiff(a, toTransform([3]float64{1, 2, 3}, [4]float64{0, 0, 0, 1})); d <= tf2Tolerance {
		t.Errorf("a rotation off by 90°: differ by only %g", d)
	}
}
