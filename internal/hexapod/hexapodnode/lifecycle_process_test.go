package hexapodnode

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// servoLog counts what reaches the servos.
type servoLog struct {
	writes, torqueOn, torqueOff int
}

func (s *servoLog) SetTorque(on bool) error {
	if on {
		s.torqueOn++
	} else {
		s.torqueOff++
	}
	return nil
}
func (s *servoLog) SetSpeed(float64) error                { return nil }
func (s *servoLog) WriteGoals(*hexapod.Joints) error      { s.writes++; return nil }
func (s *servoLog) ReadPositions(j *hexapod.Joints) error { return nil }

// TestAdapter_ActivateDeactivate: an inactive adapter writes nothing to
// the servos and refuses every input; Activate starts a fresh controller
// on the given servos; Deactivate frees them (torque off) and stops.
func TestAdapter_ActivateDeactivate(t *testing.T) {
	s, err := loadSettings(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAdapter(s, nil, &logRec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Deactivate(); err != nil || a.Active() {
		t.Fatalf("Deactivate: %v, active %v", err, a.Active())
	}
	now := time.Unix(100, 0)
	servos := &servoLog{}
	inactive := func(when string) {
		t.Helper()
		if ok, msg := a.Command(hexapod.CmdStartStop); ok || !strings.Contains(msg, "not active") {
			t.Errorf("%s: start_stop %v %q, want refused", when, ok, msg)
		}
		if err := a.CmdVel([3]float64{0.1}, [3]float64{}, now); !errors.Is(err, ErrInactive) {
			t.Errorf("%s: cmd_vel %v", when, err)
		}
		if err := a.Joy(hexapod.Joy{Axes: make([]float32, 8), Buttons: make([]int32, 11)}, now); !errors.Is(err, ErrInactive) {
			t.Errorf("%s: joy %v", when, err)
		}
		before := *servos
		for i := 0; i < 50; i++ {
			if r := a.Tick(now); len(r.Positions) != 0 || r.StateChanged {
				t.Fatalf("%s: inactive tick %+v", when, r)
			}
		}
		if *servos != before {
			t.Errorf("%s: the servos were driven while inactive: %+v -> %+v", when, before, *servos)
		}
	}
	inactive("before activation")
	if err := a.Activate(servos); err != nil || !a.Active() {
		t.Fatalf("Activate: %v", err)
	}
	if r := a.Tick(now); !r.StateChanged || len(r.Positions) != hexapod.NumJoints {
		t.Fatalf("first active tick %+v: want ~/state and joint positions", r)
	}
	if ok, msg := a.Command(hexapod.CmdStartStop); !ok {
		t.Fatalf("start_stop while active refused: %s", msg)
	}
	for i := 0; i < 20; i++ {
		a.Tick(now)
	}
	if servos.writes == 0 || servos.torqueOn == 0 {
		t.Fatalf("active controller after start: %+v, want goals written and torque on", *servos)
	}
	off := servos.torqueOff
	if err := a.Deactivate(); err != nil || a.Active() || servos.torqueOff != off+1 {
		t.Fatalf("Deactivate: %v, active %v, torque off %d→%d", err, a.Active(), off, servos.torqueOff)
	}
	inactive("after deactivation")
	if err := a.Activate(servos); err != nil {
		t.Fatal(err)
	}
	if st := a.State(); st != hexapod.Idle {
		t.Fatalf("reactivated controller in %v, want a fresh FSM (Idle)", st)
	}
}

// TestLifecycle_Hexapod_Process drives a motion_control process started
// with autostart:=false through every transition with `fsmnodes
// lifecycle`: unconfigured and inactive it publishes no joint_states and
// refuses the commands; active it stands up; deactivated it stops
// publishing; cleanup, configure, activate again; shutdown finalizes it.
func TestLifecycle_Hexapod_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	startMotionControl(t, domain, "--ros-args", "-p", "autostart:=false")
	n, ctx := rostest.Node(t, domain, "hexapod_lifecycle_test")
	var joints atomic.Int64
	if _, err := ros.NewSubscription(n, "/joint_states", ros.QoSDefault, func(*sensor_msgs_msg.JointState) { joints.Add(1) }); err != nil {
		t.Fatal(err)
	}
	trigger := func(srv string) (bool, string) {
		t.Helper()
		c, err := ros.NewClient(n, "/hexapod_controller/"+srv, std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		testenv.WaitFor(t, 30*time.Second, srv+" server", c.ServiceIsReady)
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		r, err := c.Call(cctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			t.Fatalf("%s: %v", srv, err)
		}
		return r.Success, r.Message
	}
	cli := func(want string, args ...string) {
		t.Helper()
		out, errOut, ok := testenv.CLI(t, domain, append([]string{"lifecycle"}, args...)...)
		if !ok || strings.TrimSpace(out) != want {
			t.Fatalf("fsmnodes lifecycle %v: ok=%v stdout %q stderr %q, want %q", args, ok, out, errOut, want)
		}
	}
	// silent proves no joint_states arrive for a while (a wall-clock
	// window: the 100 Hz node would send dozens).
	silent := func(when string) {
		t.Helper()
		before := joints.Load()
		time.Sleep(500 * time.Millisecond)
		if got := joints.Load() - before; got != 0 {
			t.Fatalf("%s: %d joint_states published", when, got)
		}
	}
	publishing := func(when string) {
		t.Helper()
		before := joints.Load()
		testenv.WaitFor(t, 30*time.Second, when+": joint_states", func() bool { return joints.Load() > before+10 })
	}
	cli("/hexapod_controller", "nodes")
	cli("1", "nodes", "-c")
	if _, errOut, ok := testenv.CLI(t, domain, "lifecycle", "get", "/joy_node"); ok || strings.TrimSpace(errOut) != "Node not found" {
		t.Fatalf("lifecycle get of a missing node: ok=%v %q", ok, errOut)
	}
	if out, _, ok := testenv.CLI(t, domain, "lifecycle", "list", "/hexapod_controller", "-a"); !ok ||
		strings.Count(out, "- ") != 25 || !strings.HasPrefix(out, "- configure [1]\n\tStart: unconfigured\n\tGoal: configuring\n- transition_success [10]") {
		t.Fatalf("lifecycle list -a: %q", out)
	}
	cli("unconfigured [1]", "get", "/hexapod_controller")
	cli("- configure [1]\n\tStart: unconfigured\n\tGoal: configuring\n- shutdown [5]\n\tStart: unconfigured\n\tGoal: shuttingdown",
		"list", "hexapod_controller")
	if ok, msg := trigger("start_stop"); ok || !strings.Contains(msg, "not active") {
		t.Fatalf("start_stop while unconfigured: %v %q", ok, msg)
	}
	silent("unconfigured")
	cli("Transitioning successful", "set", "/hexapod_controller", "configure")
	cli("inactive [2]", "get", "/hexapod_controller")
	if ok, _ := trigger("stand_up"); ok {
		t.Fatal("stand_up accepted while inactive")
	}
	silent("inactive")
	cli("Transitioning successful", "set", "/hexapod_controller", "3") // activate, by id
	cli("active [3]", "get", "/hexapod_controller")
	publishing("active")
	if ok, msg := trigger("start_stop"); !ok {
		t.Fatalf("start_stop while active refused: %s", msg)
	}
	if ok, msg := trigger("stand_up"); !ok {
		t.Fatalf("stand_up while active refused: %s", msg)
	}
	cli("Transitioning successful", "set", "/hexapod_controller", "deactivate")
	time.Sleep(100 * time.Millisecond) // a tick in flight may still arrive
	silent("deactivated")
	cli("Transitioning successful", "set", "/hexapod_controller", "cleanup")
	cli("unconfigured [1]", "get", "/hexapod_controller")
	cli("Transitioning successful", "set", "/hexapod_controller", "configure")
	cli("Transitioning successful", "set", "/hexapod_controller", "activate")
	publishing("active again")
	cli("Transitioning successful", "set", "/hexapod_controller", "shutdown")
	cli("/hexapod_controller: finalized [4]", "get")
	time.Sleep(100 * time.Millisecond)
	silent("finalized")
	// nothing leads out of finalized: ros2's message, exit status 1
	_, errOut, ok := testenv.CLI(t, domain, "lifecycle", "set", "/hexapod_controller", "configure")
	if ok || strings.TrimSpace(errOut) != "Unknown transition requested, available ones are:" {
		t.Fatalf("set configure from finalized: ok=%v stderr %q", ok, errOut)
	}
}
