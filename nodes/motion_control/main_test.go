package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

const childEnv = "MOTION_CONTROL_TEST_CHILD"

// TestMain lets the test binary act as the motion_control executable when
// started by TestMotionControl_Process with childEnv set.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(testenv.Main(m))
}

// syncBuf collects the child's output; the test reads it while exec's
// copying goroutine writes.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type recorder struct {
	mu     sync.Mutex
	states []string
	joints [][]float64
	names  []string
}

func (r *recorder) snapshot() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.states...), len(r.joints)
}

// TestMotionControl_Process starts motion_control as a separate process on
// a domain of its own and drives it over DDS: services, cmd_vel, ~/state and
// joint_states.
func TestMotionControl_Process(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test")
	}
	domain := testenv.Domain(t)
	params, err := filepath.Abs("../../params/hexapod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "--ros-args", "--params-file", params, "-p", "LEG_LIFT_HEIGHT:=0.04")
	child.Env = append(os.Environ(), childEnv+"=1", fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	out := &syncBuf{}
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	defer func() {
		child.Process.Signal(syscall.SIGKILL)
		<-exited
	}()

	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	n, err := rc.NewNode("hexapod_process_test", "")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := ros.NewSubscription(n, "/hexapod_controller/state", ros.QoSLatched, func(m *std_msgs_msg.String) {
		rec.mu.Lock()
		rec.states = append(rec.states, m.Data)
		rec.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, "/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) {
		rec.mu.Lock()
		rec.joints = append(rec.joints, m.Position)
		rec.names = m.Name
		rec.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	cmdVel, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*ros.Client[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response]{}
	for _, s := range []string{"start_stop", "stand_up", "sit_down", "stand_walk"} {
		c, err := ros.NewClient(n, "/hexapod_controller/"+s, std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		clients[s] = c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	go rc.Spin(ctx)

	call := func(name string, wantOK bool) string {
		t.Helper()
		c := clients[name]
		if err := c.WaitForService(ctx); err != nil {
			t.Fatalf("wait for %s: %v\n%s", name, err, out.String())
		}
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		resp, err := c.Call(cctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		if resp.Success != wantOK {
			t.Fatalf("%s: success=%v (%q), want %v", name, resp.Success, resp.Message, wantOK)
		}
		return resp.Message
	}
	lastState := func() string {
		s, _ := rec.snapshot()
		if len(s) == 0 {
			return ""
		}
		return s[len(s)-1]
	}

	testenv.WaitFor(t, 20*time.Second, "latched state Idle", func() bool { return lastState() == "Idle" })

	// parameters: from the file, one overridden by -p, visible to clients
	getp, err := ros.NewClient(n,
		"/hexapod_controller/get_parameters", rcl_interfaces_srv.GetParameters)
	if err != nil {
		t.Fatal(err)
	}
	if err := getp.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	pr, err := getp.Call(pctx, &rcl_interfaces_srv.GetParameters_Request{Names: []string{"SUB_STEPS", "LEG_LIFT_HEIGHT", "COXA_LF", "servo.driver"}})
	pcancel()
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Values) != 4 || pr.Values[0].IntegerValue != 50 || pr.Values[1].DoubleValue != 0.04 ||
		!reflect.DeepEqual(pr.Values[2].IntegerArrayValue, []int64{15, 3, 1024, 512, 300, 1, 0}) || pr.Values[3].StringValue != "sim" {
		t.Fatalf("parameters %+v", pr.Values)
	}
	if msg := call("stand_up", false); !strings.Contains(msg, "not started") {
		t.Fatalf("stand_up while idle: %q", msg)
	}
	call("start_stop", true)
	testenv.WaitFor(t, 5*time.Second, "Sitting", func() bool { return lastState() == "Sitting" })
	call("stand_up", true)
	testenv.WaitFor(t, 5*time.Second, "Walking", func() bool { return lastState() == "Walking" })
	if msg := call("start_stop", false); !strings.Contains(msg, "sit down first") {
		t.Fatalf("start_stop while up: %q", msg)
	}

	_, before := rec.snapshot()
	rec.mu.Lock()
	first := append([]float64(nil), rec.joints[len(rec.joints)-1]...)
	rec.mu.Unlock()
	for i := 0; i < 20; i++ {
		if err := cmdVel.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.1}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // commands at 20 Hz for 1 s: the walk being measured
	}
	_, after := rec.snapshot()
	rec.mu.Lock()
	last := append([]float64(nil), rec.joints[len(rec.joints)-1]...)
	names := rec.names
	rec.mu.Unlock()
	if after-before < 20 || reflect.DeepEqual(first, last) || len(last) != 18 {
		t.Fatalf("joint_states while walking: %d messages, first %v last %v", after-before, first, last)
	}
	if len(names) != 18 || names[0] != "COXA_RR" || names[17] != "TIBIA_LF" {
		t.Fatalf("joint names %v", names)
	}

	nan := geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: math.NaN()}}
	if err := cmdVel.Publish(&nan); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "the NaN cmd_vel to be rejected", func() bool {
		return strings.Contains(out.String(), "cmd_vel rejected: linear.x is NaN")
	})

	call("sit_down", true)
	testenv.WaitFor(t, 10*time.Second, "Sitting again", func() bool { return lastState() == "Sitting" })
	call("start_stop", true)
	testenv.WaitFor(t, 5*time.Second, "Idle again", func() bool { return lastState() == "Idle" })

	states, _ := rec.snapshot()
	want := []string{"Idle", "Sitting", "Standing_up", "Walking", "Sitting_down", "Sitting", "Idle"}
	if !reflect.DeepEqual(states, want) {
		t.Fatalf("states %v, want %v", states, want)
	}

	child.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("motion_control exited with %v\n%s", err, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("motion_control did not stop on SIGINT\n%s", out.String())
	}
	t.Logf("motion_control output:\n%s", out.String())
}
