package urdf_test

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	"github.com/fsmnodes/fsmnodes/internal/urdf"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
	"github.com/fsmnodes/fsmnodes/internal/velma/velmanode"
)

var update = flag.Bool("update", false, "rewrite urdf/*.urdf from the writers in robots_gen_test.go")

const dir = "../../urdf"

// robots are the files of urdf/ with their writers and the joints of the
// joint_states their node publishes.
var robots = []struct {
	file   string
	write  func() string
	joints []string
}{
	{"hexapod.urdf", func() string { return hexapodURDF(hexapod.DefaultGeometry()) }, hexapod.JointNames()},
	{"diffbot.urdf", diffbotURDF, sim.WheelJoints()},
	{"velma.urdf", velmaURDF, velmanode.JointStateNames},
}

func load(t *testing.T, file string) (*urdf.Model, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	m, err := urdf.Parse(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m, b
}

func TestRobotFiles_UpToDate(t *testing.T) {
	for _, r := range robots {
		want := r.write()
		path := filepath.Join(dir, r.file)
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s is not what robots_gen_test.go writes; run go test ./internal/urdf -run TestRobotFiles_UpToDate -update", path)
		}
	}
}

// Every joint a node names in joint_states is a moving joint of its URDF,
// and every moving joint of the URDF is in joint_states (else RViz shows
// links without transforms).
func TestRobotFiles_JointStatesMatch(t *testing.T) {
	for _, r := range robots {
		t.Run(r.file, func(t *testing.T) {
			m, _ := load(t, r.file)
			for _, n := range r.joints {
				j, ok := m.Joint(n)
				if !ok {
					t.Errorf("joint_states names %q, which %s does not define", n, r.file)
					continue
				}
				if !j.Type.Moving() {
					t.Errorf("joint_states names %q, a %v joint in %s", n, j.Type, r.file)
				}
			}
			for _, n := range m.MovingJoints() {
				if !slices.Contains(r.joints, n) {
					t.Errorf("%s: moving joint %q is not in the node's joint_states", r.file, n)
				}
			}
			for _, l := range m.Links {
				if len(l.Visuals) > 0 {
					return
				}
			}
			t.Errorf("%s has no visuals", r.file)
		})
	}
}

// ros2 launch reads a <param value="$(command 'cat x.urdf')"/> as YAML
// first; the files must come out of that as one string (no "key: value",
// no "- item", no "#" comments) that parses to the same robot.
func TestRobotFiles_SurviveLaunchYAML(t *testing.T) {
	for _, r := range robots {
		m, b := load(t, r.file)
		var n yaml.Node
		if err := yaml.Unmarshal(b, &n); err != nil {
			t.Fatalf("%s: not YAML-safe: %v", r.file, err)
		}
		doc := n.Content[0]
		if doc.Kind != yaml.ScalarNode || doc.ShortTag() != "!!str" {
			t.Fatalf("%s reads as YAML %v %s, want a plain string", r.file, doc.Kind, doc.ShortTag())
		}
		m2, err := urdf.Parse([]byte(doc.Value))
		if err != nil {
			t.Fatalf("%s after YAML folding: %v", r.file, err)
		}
		if len(m2.Links) != len(m.Links) || len(m2.Joints) != len(m.Joints) || m2.Root != m.Root {
			t.Fatalf("%s changes under YAML folding", r.file)
		}
	}
}

const fkTol = 1e-9

func vecClose(a, b geom.Vec3) bool {
	d := a.Sub(b)
	return math.Abs(d.X) <= fkTol && math.Abs(d.Y) <= fkTol && math.Abs(d.Z) <= fkTol
}

// The feet of the hexapod URDF are where hexapod.LegFK puts them, for
// random joint angles.
func TestHexapodURDF_MatchesLegFK(t *testing.T) {
	m, _ := load(t, "hexapod.urdf")
	g := hexapod.DefaultGeometry()
	names := hexapod.JointNames()
	rng := rand.New(rand.NewPCG(11, 12))
	for range 2000 {
		var j hexapod.Joints
		q := map[string]float64{}
		for k := range j {
			j[k] = (rng.Float64()*2 - 1) * 2.6
			q[names[k]] = j[k]
		}
		for leg := range hexapod.NumLegs {
			want := g.LegFK(leg, j.Leg(leg), hexapod.Pose{})
			tf, err := m.FK("foot_"+hexapod.LegName(leg), q)
			if err != nil {
				t.Fatal(err)
			}
			if !vecClose(tf.Translation, geom.Vec3{X: want.X, Y: want.Y, Z: want.Z}) {
				t.Fatalf("leg %s at %v: URDF foot %v, LegFK %+v", hexapod.LegName(leg), j.Leg(leg), tf.Translation, want)
			}
		}
	}
	// and the IK: a neutral stance solved by SolveIK puts the URDF feet
	// on the requested points
	var feet hexapod.Feet
	for i := range feet {
		feet[i] = g.Neutral(i, -g.WalkingHeight)
	}
	var j hexapod.Joints
	if err := g.SolveIK(&feet, hexapod.Pose{}, &j); err != nil {
		t.Fatal(err)
	}
	q := map[string]float64{}
	for k := range j {
		q[names[k]] = j[k]
	}
	for leg := range hexapod.NumLegs {
		tf, _ := m.FK("foot_"+hexapod.LegName(leg), q)
		if !vecClose(tf.Translation, geom.Vec3{X: feet[leg].X, Y: feet[leg].Y, Z: feet[leg].Z}) {
			t.Fatalf("leg %s: URDF foot %v, IK target %+v", hexapod.LegName(leg), tf.Translation, feet[leg])
		}
	}
}

// Every link frame of Velma's arms (torso, arm base, links 1…7) in the
// URDF equals internal/velma/kin's, for random joint vectors.
func TestVelmaURDF_MatchesKin(t *testing.T) {
	m, _ := load(t, "velma.urdf")
	rng := rand.New(rand.NewPCG(21, 22))
	for range 1000 {
		body := make([]float64, kin.BodyDOF)
		q := map[string]float64{"head_pan_joint": 0, "head_tilt_joint": 0}
		for k := range body {
			body[k] = (rng.Float64()*2 - 1) * 2.9
			q[velmanode.JointStateNames[k]] = body[k]
		}
		b := kin.ForwardBody(body)
		for s, side := range []string{"right", "left"} {
			c := &b.Arm[s]
			links := []struct {
				name string
				f    kin.Frame
			}{{"torso_link0", c.Torso}, {"calib_" + side + "_arm_base_link", c.Link[0]}}
			for i := 1; i <= 7; i++ {
				links = append(links, struct {
					name string
					f    kin.Frame
				}{side + "_arm_" + string(rune('0'+i)) + "_link", c.Link[i]})
			}
			for _, l := range links {
				tf, err := m.FK(l.name, q)
				if err != nil {
					t.Fatal(err)
				}
				if !vecClose(tf.Translation, l.f.P) {
					t.Fatalf("%s at %v: URDF position %v, kin %v", l.name, body, tf.Translation, l.f.P)
				}
				r := tf.Rotation.Matrix()
				for j := range 3 {
					if !vecClose(r.Col(j), l.f.R.Col(j)) {
						t.Fatalf("%s at %v: URDF rotation %v, kin %v", l.name, body, r, l.f.R)
					}
				}
			}
		}
	}
}

// The diffbot's laser is where the simulator's scan comes from: on the
// robot's centre at the lidar height above the ground.
func TestDiffbotURDF_Frames(t *testing.T) {
	m, _ := load(t, "diffbot.urdf")
	if m.Root != sim.FrameBase {
		t.Fatalf("root %q, want %q", m.Root, sim.FrameBase)
	}
	chain, err := m.Chain(sim.FrameScan)
	if err != nil {
		t.Fatal(err)
	}
	if len(chain) != 2 || chain[0].Child != sim.FrameBaseLink || chain[1].Child != sim.FrameScan {
		t.Fatalf("chain to the laser: %v", chain)
	}
	tf, _ := m.FK(sim.FrameScan, nil)
	if !vecClose(tf.Translation, geom.Vec3{Z: sim.LaserHeight}) {
		t.Fatalf("laser at %v", tf.Translation)
	}
	// each wheel turns about its axle, which points left (+y), so positive
	// angles roll the robot forward
	for _, w := range []string{"wheel_left", "wheel_right"} {
		j, _ := m.ParentJoint(w)
		tf, _ := m.FK(w, map[string]float64{j.Name: 0.1})
		v := tf.Rotation.Rotate(geom.Vec3{X: 0, Y: 0, Z: 1})
		if !vecClose(v, geom.Vec3{Y: 1}) {
			t.Fatalf("%s axle %v, want +y", w, v)
		}
		if math.Abs(math.Abs(tf.Translation.Y)-sim.WheelSeparation/2) > fkTol || math.Abs(tf.Translation.Z-sim.WheelRadius) > fkTol {
			t.Fatalf("%s at %v", w, tf.Translation)
		}
	}
}
