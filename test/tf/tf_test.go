// Package tf runs the demo launch file with the real executables and checks
// each robot's TF over DDS, as RViz or Foxglove would see it: the frames of
// /diffbot/tf, /hexapod/tf and /velma/tf and their tf_static, the diffbot's
// REP-105 chain map → odom → base_footprint → base_link → laser, the
// robot_description each robot_state_publisher latches for a late
// subscriber, and `fsmnodes topic echo <ns>/tf --once` printing the frames.
package tf

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	rsmtf "github.com/fsmnodes/fsmnodes/internal/rsm/tf"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/urdf"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// frames collects the parent>child pairs seen on one TF topic.
type frames struct {
	mu   *sync.Mutex // shared by the topics feeding one buffer
	seen map[string]bool
	buf  *rsmtf.Buffer
}

func (f *frames) add(m *tf2_msgs_msg.TFMessage, static bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range m.Transforms {
		f.seen[t.Header.FrameId+">"+t.ChildFrameId] = true
		r := t.Transform.Rotation
		tr := t.Transform.Translation
		_ = f.buf.Set(rsmtf.Transform{Parent: t.Header.FrameId, Child: t.ChildFrameId, Static: static,
			Translation: geom.Vec3{X: tr.X, Y: tr.Y, Z: tr.Z}, Rotation: geom.Quat{X: r.X, Y: r.Y, Z: r.Z, W: r.W}})
	}
}

func (f *frames) missing(want []string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, w := range want {
		if !f.seen[w] {
			out = append(out, w)
		}
	}
	return out
}

// expected lists the transforms of a URDF: moving joints on tf, the
// others on tf_static.
func expected(t *testing.T, root, file string) (moving, fixed []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "urdf", file))
	if err != nil {
		t.Fatal(err)
	}
	m, err := urdf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range m.Joints {
		pair := j.Parent + ">" + j.Child
		if j.Type.Moving() {
			moving = append(moving, pair)
		} else {
			fixed = append(fixed, pair)
		}
	}
	return moving, fixed
}

func TestDemoTF(t *testing.T) {
	if testing.Short() {
		t.Skip("launches the whole demo")
	}
	domain := testenv.Domain(t)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
	testenv.LaunchDemo(t, domain, "foxglove:=false")
	env := append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))

	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	go func() { _ = rc.Spin(context.Background()) }()
	n, err := rc.NewNode("tf_test", "")
	if err != nil {
		t.Fatal(err)
	}
	staticQoS := ros.QoSLatched.KeepLast(10) // one latched message per publisher
	robots := []struct {
		ns, urdf string
		extra    []string // transforms from outside the URDF
		extraSt  []string
	}{
		{"/diffbot", "diffbot.urdf", []string{"odom>base_footprint"}, []string{"map>odom"}},
		{"/hexapod", "hexapod.urdf", nil, nil},
		{"/velma", "velma.urdf", nil, nil},
	}
	type topicWant struct {
		topic string
		f     *frames
		want  []string
	}
	var all []topicWant
	type robotTF struct {
		mu  *sync.Mutex
		buf *rsmtf.Buffer
	}
	bufs := map[string]robotTF{}
	for _, r := range robots {
		moving, fixed := expected(t, root, r.urdf)
		buf, mu := rsmtf.NewBuffer(), &sync.Mutex{}
		bufs[r.ns] = robotTF{mu, buf}
		dyn := &frames{mu: mu, seen: map[string]bool{}, buf: buf}
		st := &frames{mu: mu, seen: map[string]bool{}, buf: buf}
		if _, err := ros.NewSubscription(n, r.ns+"/tf", ros.QoSDefault.KeepLast(100), func(m *tf2_msgs_msg.TFMessage) { dyn.add(m, false) }); err != nil {
			t.Fatal(err)
		}
		if _, err := ros.NewSubscription(n, r.ns+"/tf_static", staticQoS, func(m *tf2_msgs_msg.TFMessage) { st.add(m, true) }); err != nil {
			t.Fatal(err)
		}
		all = append(all, topicWant{r.ns + "/tf", dyn, append(moving, r.extra...)},
			topicWant{r.ns + "/tf_static", st, append(fixed, r.extraSt...)})
	}
	// and nothing of the robots on the global /tf
	global := &frames{mu: &sync.Mutex{}, seen: map[string]bool{}, buf: rsmtf.NewBuffer()}
	if _, err := ros.NewSubscription(n, "/tf", ros.QoSDefault, func(m *tf2_msgs_msg.TFMessage) { global.add(m, false) }); err != nil {
		t.Fatal(err)
	}

	for _, tw := range all {
		var miss []string
		testenv.WaitFor(t, 3*time.Minute, tw.topic+" frames", func() bool {
			miss = tw.f.missing(tw.want)
			return len(miss) == 0
		})
		t.Logf("%s: all %d transforms seen", tw.topic, len(tw.want))
	}
	global.mu.Lock()
	if len(global.seen) != 0 {
		t.Errorf("the robots' transforms leak onto the global /tf: %v", global.seen)
	}
	global.mu.Unlock()
	lookup := func(ns, target, source string) (rsm.Pose, error) {
		b := bufs[ns]
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.buf.Lookup(target, source)
	}

	// REP 105 on the diffbot: the laser is connected to the map, 0.15 m up
	p, err := lookup("/diffbot", "map", "laser")
	if err != nil {
		t.Fatalf("map → laser: %v", err)
	}
	if d := p.Position.Z - 0.15; d > 1e-9 || d < -1e-9 {
		t.Errorf("laser %v m above the map, want 0.15", p.Position.Z)
	}
	if _, err := lookup("/hexapod", "base_link", "foot_LF"); err != nil {
		t.Errorf("hexapod base_link → foot_LF: %v", err)
	}
	if _, err := lookup("/velma", "world", "left_arm_7_link"); err != nil {
		t.Errorf("velma world → left_arm_7_link: %v", err)
	}

	// a late subscriber gets every robot_description (transient local)
	for _, r := range robots {
		got := make(chan string, 1)
		sub, err := ros.NewSubscription(n, r.ns+"/robot_description", ros.QoSLatched, func(m *std_msgs_msg.String) {
			select {
			case got <- m.Data:
			default:
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-got:
			m, err := urdf.Parse([]byte(d))
			if err != nil {
				t.Errorf("%s/robot_description: %v", r.ns, err)
			} else {
				b, _ := os.ReadFile(filepath.Join(root, "urdf", r.urdf))
				want, _ := urdf.Parse(b)
				if m.Name != want.Name || len(m.Links) != len(want.Links) || len(m.Joints) != len(want.Joints) {
					t.Errorf("%s/robot_description is robot %q with %d links, want %q with %d", r.ns, m.Name, len(m.Links), want.Name, len(want.Links))
				}
			}
		case <-time.After(time.Minute):
			t.Errorf("%s/robot_description: nothing latched for a late subscriber", r.ns)
		}
		_ = sub.Close()
	}

	// the CLI as a user would run it
	for _, c := range []struct{ topic, frame string }{
		{"/hexapod/tf", "child_frame_id: femur_" + hexapod.LegName(hexapod.LegRF)},
		{"/velma/tf", "child_frame_id: right_arm_4_link"},
		{"/diffbot/tf", "child_frame_id: base_footprint"},
	} {
		var out []byte
		testenv.WaitFor(t, 2*time.Minute, "fsmnodes topic echo "+c.topic+" --once", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			echo := exec.CommandContext(ctx, filepath.Join(bin, "fsmnodes"), "topic", "echo", c.topic, "--once")
			echo.Env = env
			out, _ = echo.CombinedOutput()
			// the diffbot's /tf carries odom → base_footprint and the wheels
			// in separate messages: try until the wanted one comes first
			return strings.Contains(string(out), c.frame)
		})
		t.Logf("fsmnodes topic echo %s --once: %d lines, with %q", c.topic, strings.Count(string(out), "\n"), c.frame)
	}
}
