package simtest

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel/cmdvelnode"
	"github.com/fsmnodes/fsmnodes/internal/launch"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	rosparam "github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// odomMoved returns how far the robot is from where odom first saw it.
func odomMoved(t *testing.T, n *ros.Node) func() float64 {
	t.Helper()
	var odom testenv.Latest[nav_msgs_msg.Odometry]
	if _, err := ros.NewSubscription(n, "/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { odom.Set(m, "") }); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 60*time.Second, "odometry", func() bool { return odom.Get() != nil })
	p0 := odom.Get().Pose.Pose.Position
	return func() float64 {
		p := odom.Get().Pose.Pose.Position
		return math.Hypot(p.X-p0.X, p.Y-p0.Y)
	}
}

func stampedCmd(stamp time.Time, x float64) *geometry_msgs_msg.TwistStamped {
	m := &geometry_msgs_msg.TwistStamped{Header: std_msgs_msg.Header{Stamp: builtin_interfaces_msg.TimeOf(stamp), FrameId: "stamped_test"}}
	m.Twist.Linear.X = x
	return m
}

// rsm_sim.launch.xml enable_stamped_cmd_vel:=true switches the whole chain:
// a TwistStamped teleoperation command goes through the stamped mux, which
// publishes TwistStamped on cmd_vel (stamped now, frame base_link), and the
// stamped simulator drives the robot; the navigator publishes TwistStamped
// too. Commands stamped an hour ago are ignored (the robot stays) and said
// so.
func TestStamped_LaunchChainDrivesTheRobot(t *testing.T) {
	if testing.Short() {
		t.Skip("launches the whole simulation")
	}
	t.Parallel()
	domain := testenv.Domain(t)
	launch := testenv.Launch(t, domain, "launch/rsm_sim.launch.xml", "enable_stamped_cmd_vel:=true", "waypoints_file:=")
	n := newNode(t, domain, "stamped_launch_test")
	var out testenv.Latest[geometry_msgs_msg.TwistStamped]
	if _, err := ros.NewSubscription(n, "/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.TwistStamped) { out.Set(m, "") }); err != nil {
		t.Fatal(err)
	}
	tele, err := ros.NewPublisher[geometry_msgs_msg.TwistStamped](n, "/teleoperation/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// A match is the first proof: a Twist subscription would never match.
	if err := n.Context().WaitForGraph(ctx, func() bool { c, _ := tele.SubscriptionCount(); return c > 0 }); err != nil {
		t.Fatalf("the mux never subscribed /teleoperation/cmd_vel as TwistStamped: %v", err)
	}
	moved := odomMoved(t, n)

	// Stale commands: ignored, so the mux stays STOPPED and the robot still.
	stale := time.Now().Add(-time.Hour)
	for range 10 {
		if err := tele.Publish(stampedCmd(stale, 0.3)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	launch.WaitOutput(t, 30*time.Second, regexp.MustCompile(`teleoperation cmd_vel: ignoring a command stamped 1h0m0[.0-9]*s ago, older than the command timeout 500ms`))
	if d := moved(); d > 0.01 {
		t.Fatalf("the robot moved %.3f m on commands stamped an hour ago", d)
	}

	// Fresh commands drive it.
	testenv.WaitFor(t, 60*time.Second, "the robot to move on stamped teleoperation commands", func() bool {
		if err := tele.Publish(stampedCmd(time.Now(), 0.3)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		return moved() > 0.2
	})
	testenv.WaitFor(t, 10*time.Second, "a moving command on /cmd_vel", func() bool {
		m := out.Get()
		return m != nil && m.Twist.Linear.X > 0
	})
	m := out.Get()
	if m.Header.FrameId != "base_link" || m.Header.Stamp.IsZero() || m.Twist.Linear.X != 0.3 {
		t.Errorf("the mux's output: %+v; want linear.x 0.3 stamped (non-zero) in base_link", m)
	}
	if age := time.Since(m.Header.Stamp.AsTime()); age > time.Minute || age < -time.Minute {
		t.Errorf("the mux's output is stamped %v, %v from now: want the node clock's now", m.Header.Stamp.AsTime(), age)
	}
	// The navigator publishes on the autonomy input with the same type.
	testenv.WaitFor(t, 30*time.Second, "the navigator's TwistStamped publisher on /autonomy/cmd_vel", func() bool {
		for _, p := range n.Context().PublishersInfo("/autonomy/cmd_vel") {
			if p.NodeName == "navigator" {
				return p.TopicType == cmdvelnode.TypeTwistStamped
			}
		}
		return false
	})
	// Nobody warned about a type mismatch.
	if o := launch.Output(); regexp.MustCompile(`none of (their|its) commands arrive`).MatchString(o) {
		t.Errorf("a mismatch warning in the stamped launch:\n%s", o)
	}
}

// A publisher of the other type on cmd_vel: the simulator says once which
// parameter to set, and the robot does not move.
func TestStamped_MismatchIsNotSilent(t *testing.T) {
	for _, tt := range []struct {
		simStamped, pubStamped bool
	}{{true, false}, {false, true}} {
		t.Run(fmt.Sprintf("sim stamped %v", tt.simStamped), func(t *testing.T) {
			t.Parallel()
			domain := testenv.Domain(t)
			sim := testenv.Start(t, "diff_drive_sim", testenv.Env(domain), testenv.Executable(t, "nodes/diff_drive_sim"),
				"--ros-args", "-p", fmt.Sprintf("enable_stamped_cmd_vel:=%v", tt.simStamped))
			n := newNode(t, domain, "mismatch_test")
			moved := odomMoved(t, n)
			var publish func() error
			if tt.pubStamped {
				p, err := ros.NewPublisher[geometry_msgs_msg.TwistStamped](n, "/cmd_vel", ros.QoSDefault)
				if err != nil {
					t.Fatal(err)
				}
				publish = func() error { return p.Publish(stampedCmd(time.Now(), 0.3)) }
			} else {
				p, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/cmd_vel", ros.QoSDefault)
				if err != nil {
					t.Fatal(err)
				}
				publish = func() error { return p.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.3}}) }
			}
			ours, theirs := cmdvelnode.TypeTwist, cmdvelnode.TypeTwistStamped
			if tt.simStamped {
				ours, theirs = theirs, ours
			}
			want := regexp.MustCompile(regexp.QuoteMeta(fmt.Sprintf("/cmd_vel: this node subscribes %s (enable_stamped_cmd_vel is %v) "+
				"but its publishers (/mismatch_test) send %s: none of their commands arrive. Set enable_stamped_cmd_vel:=%v on this node",
				ours, tt.simStamped, theirs, !tt.simStamped)))
			testenv.WaitFor(t, 30*time.Second, "the simulator's mismatch warning", func() bool {
				if err := publish(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(100 * time.Millisecond)
				return want.MatchString(sim.Output())
			})
			for range 10 { // a second of commands that never arrive
				if err := publish(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if d := moved(); d > 0.01 {
				t.Errorf("the robot moved %.3f m on commands of the other type", d)
			}
			if c := len(want.FindAllString(sim.Output(), -1)); c != 1 {
				t.Errorf("the warning was logged %d times, want once", c)
			}
		})
	}
}

// joy_teleop with publish_stamped_twist (teleop_twist_joy's parameter)
// publishes TwistStamped stamped now in its frame parameter
// (teleop_twist_joy by default), as teleop_twist_joy does.
func TestStamped_JoyTeleopPublishesTwistStamped(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	testenv.Start(t, "joy_teleop", testenv.Env(domain), testenv.Executable(t, "nodes/joy_teleop"),
		"--ros-args", "-p", "publish_stamped_twist:=true")
	n := newNode(t, domain, "stamped_joy_test")
	var got testenv.Latest[geometry_msgs_msg.TwistStamped]
	if _, err := ros.NewSubscription(n, "/teleoperation/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.TwistStamped) { got.Set(m, "") }); err != nil {
		t.Fatal(err)
	}
	pad, err := ros.NewPublisher[sensor_msgs_msg.Joy](n, "/joy", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	// Enable button held, stick full up: 0.5 m/s with the defaults.
	testenv.WaitFor(t, 30*time.Second, "a moving TwistStamped from joy_teleop", func() bool {
		if err := pad.Publish(&sensor_msgs_msg.Joy{Axes: []float32{0, 1}, Buttons: []int32{1}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		m := got.Get()
		return m != nil && m.Twist.Linear.X != 0
	})
	m := got.Get()
	if m.Twist.Linear.X != 0.5 || m.Header.FrameId != "teleop_twist_joy" || m.Header.Stamp.IsZero() {
		t.Errorf("joy_teleop sent %+v; want linear.x 0.5 stamped (non-zero) in teleop_twist_joy", m)
	}
	if age := time.Since(m.Header.Stamp.AsTime()); age < -time.Minute || age > time.Minute {
		t.Errorf("stamped %v, %v from now: want the node clock's now", m.Header.Stamp.AsTime(), age)
	}
}

// The hexapod controller with enable_stamped_cmd_vel subscribes cmd_vel
// as TwistStamped (a Twist subscription would never match this publisher)
// and says nothing about a mismatch.
func TestStamped_HexapodSubscribesTwistStamped(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	hexapod := testenv.Start(t, "motion_control", testenv.Env(domain), testenv.Executable(t, "nodes/motion_control"),
		"--ros-args", "-p", "enable_stamped_cmd_vel:=true")
	n := newNode(t, domain, "stamped_hexapod_test")
	pub, err := ros.NewPublisher[geometry_msgs_msg.TwistStamped](n, "/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.Context().WaitForGraph(ctx, func() bool { c, _ := pub.SubscriptionCount(); return c > 0 }); err != nil {
		t.Fatalf("motion_control never subscribed /cmd_vel as TwistStamped: %v", err)
	}
	for range 5 {
		if err := pub.Publish(stampedCmd(time.Now(), 0.05)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	hexapod.MustRun(t)
	if o := hexapod.Output(); regexp.MustCompile(`none of (their|its) commands arrive`).MatchString(o) {
		t.Errorf("a mismatch warning:\n%s", o)
	}
}

// One argument switches the whole demo: enable_stamped_cmd_vel:=true on
// demo.launch.xml (and on rsm_sim.launch.xml and hexapod.launch.xml, whose
// nodes load params/sim.yaml and params/hexapod.yaml under their own
// names) hands the parameter (publish_stamped_twist to joy_teleop) to
// every node with a velocity topic, and no parameter file those nodes
// load sets it (a node's own entry in a file would win over the launch
// file's inline value).
func TestStamped_LaunchArgumentSwitchesEveryVelocityNode(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir() // the loader resolves the executables; stand-ins will do
	nodes, _ := filepath.Glob(filepath.Join(root, "nodes", "*"))
	for _, n := range nodes {
		if err := os.WriteFile(filepath.Join(bin, filepath.Base(n)), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	param := map[string]string{ // executable -> the parameter that switches it
		"robot_control_mux": cmdvelnode.ParamStamped, "diff_drive_sim": cmdvelnode.ParamStamped,
		"simple_navigator": cmdvelnode.ParamStamped, "motion_control": cmdvelnode.ParamStamped,
		"joy_teleop": cmdvelnode.ParamPublishStamped,
	}
	for _, tt := range []struct {
		file  string
		nodes int // velocity nodes it starts (with joystick:=true)
	}{{"demo.launch.xml", 5}, {"rsm_sim.launch.xml", 4}, {"hexapod.launch.xml", 1}} {
		for _, on := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s enable_stamped_cmd_vel:=%v", tt.file, on), func(t *testing.T) {
				args := [][2]string{{"joystick", "true"}}
				if on {
					args = append(args, [2]string{"enable_stamped_cmd_vel", "true"})
				}
				d, err := launch.Load(filepath.Join(root, "launch", tt.file), launch.Options{ShareDir: root, BinDir: bin,
					Args: args, LookupEnv: func(string) (string, bool) { return "", false }})
				if err != nil {
					t.Fatal(err)
				}
				seen := map[string]bool{}
				for _, p := range d.Processes {
					name, ok := param[p.Executable]
					if !ok {
						continue
					}
					seen[p.Executable] = true
					fqn := ros.FullyQualifiedNodeName(p.Namespace, p.Name)
					var inline any
					for _, src := range p.Params {
						for _, v := range src.Inline {
							if v.Name == name {
								inline = v.Value
							}
						}
						if src.File != "" {
							var o rosparam.Overrides
							if err := o.AddFile(src.File); err != nil {
								t.Fatal(err)
							}
							if v, set := o.For(fqn)[name]; set {
								t.Errorf("%s: %s sets %s = %v, which would win over the launch argument", fqn, src.File, name, v)
							}
						}
					}
					if inline != on {
						t.Errorf("%s (%s): %s = %#v, want %v", fqn, p.Executable, name, inline, on)
					}
				}
				if len(seen) != tt.nodes {
					t.Errorf("%s started %v, want %d velocity nodes", tt.file, seen, tt.nodes)
				}
			})
		}
	}
}

// Under use_sim_time the simulator judges a stamp by the simulation time it
// publishes on /clock: a command stamped with the latest /clock drives the
// robot, one stamped a simulated second earlier is stale and ignored, and
// a wall-clock stamp (decades ahead of the simulation) is taken as
// received now, with a warning about the clocks.
func TestStamped_SimulatorJudgesStampsBySimulationTime(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	sim := testenv.Start(t, "diff_drive_sim", testenv.Env(domain), testenv.Executable(t, "nodes/diff_drive_sim"),
		"--ros-args", "-p", "enable_stamped_cmd_vel:=true", "-p", "publish_clock:=true")
	n := newNode(t, domain, "stamped_simtime_test")
	var clock testenv.Latest[rosgraph_msgs_msg.Clock]
	if _, err := ros.NewSubscription(n, "/clock", ros.QoSClock, func(m *rosgraph_msgs_msg.Clock) { clock.Set(m, "") }); err != nil {
		t.Fatal(err)
	}
	pub, err := ros.NewPublisher[geometry_msgs_msg.TwistStamped](n, "/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	moved := odomMoved(t, n)
	simNow := func() time.Time { return clock.Get().Clock.AsTime() }
	// Sim time starts at 0: wait until a second before it is not 0 (a zero
	// stamp is taken as now).
	testenv.WaitFor(t, 30*time.Second, "/clock past 2 s", func() bool { return clock.Get() != nil && simNow().After(time.Unix(2, 0)) })

	for range 10 { // a simulated second late: stale
		if err := pub.Publish(stampedCmd(simNow().Add(-time.Second), 0.3)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	sim.WaitOutput(t, 30*time.Second, regexp.MustCompile(`cmd_vel: ignoring a command stamped 1(\.[0-9]+)?s ago, older than the command timeout 500ms`))
	if d := moved(); d > 0.01 {
		t.Fatalf("the robot moved %.3f m on commands stamped a simulated second ago", d)
	}
	testenv.WaitFor(t, 30*time.Second, "the robot to move on commands stamped with /clock", func() bool {
		if err := pub.Publish(stampedCmd(simNow(), 0.3)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		return moved() > 0.1
	})
	if err := pub.Publish(stampedCmd(time.Now(), 0.3)); err != nil { // wall time: far ahead of the simulation
		t.Fatal(err)
	}
	sim.WaitOutput(t, 30*time.Second, regexp.MustCompile(`cmd_vel: a command is stamped \S+ ahead of this node's clock`))
}
