package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/hexapod/dynamixel"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// TestMotionControl_DynamixelOnPTY runs motion_control with the Dynamixel
// driver on a pseudo-terminal served by a simulated AX-12A bus
// (a domain of its own) and checks what reaches the servos: torque and the
// sitting speed on start, goals of the sitting pose, full speed when
// standing up, torque off when stopped and on shutdown.
func TestMotionControl_DynamixelOnPTY(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test")
	}
	master, slave, err := dynamixel.OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	cfg := dynamixel.DefaultConfig()
	var ids []byte
	for _, s := range cfg.Servos {
		ids = append(ids, s.ID)
	}
	bus := dynamixel.NewSimBus(ids...)
	go bus.Serve(master)

	domain := testenv.Domain(t)
	params, _ := filepath.Abs("../../params/hexapod.yaml")
	child := exec.Command(os.Args[0], "--ros-args", "--params-file", params,
		"-p", "servo.driver:=dynamixel", "-p", "servo.port:="+slave, "-p", "servo.timeout:=0.5")
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
	n, err := rc.NewNode("hexapod_dynamixel_test", "")
	if err != nil {
		t.Fatal(err)
	}
	states := make(chan string, 100)
	if _, err := ros.NewSubscription(n, "/hexapod_controller/state", ros.QoSLatched, func(m *std_msgs_msg.String) {
		states <- m.Data
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	go rc.Spin(ctx)
	call := func(name string) {
		t.Helper()
		c, err := ros.NewClient(n, "/hexapod_controller/"+name, std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WaitForService(ctx); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out.String())
		}
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		if r, err := c.Call(cctx, &std_srvs_srv.Trigger_Request{}); err != nil || !r.Success {
			t.Fatalf("%s: %+v, %v", name, r, err)
		}
	}
	waitState := func(want string) {
		t.Helper()
		for {
			select {
			case s := <-states:
				if s == want {
					return
				}
			case <-ctx.Done():
				t.Fatalf("state %s not reached\n%s", want, out.String())
			}
		}
	}
	allTorque := func(v byte) bool {
		for _, id := range ids {
			if bus.Byte(id, dynamixel.AddrTorqueEnable) != v {
				return false
			}
		}
		return true
	}

	waitState("Idle")
	if !allTorque(0) {
		t.Fatal("torque on before start")
	}
	call("start_stop")
	waitState("Sitting")
	testenv.WaitFor(t, 5*time.Second, "torque on and sitting speed", func() bool {
		return allTorque(1) && bus.Word(19, dynamixel.AddrMovingSpeed) == 106
	})
	// sitting pose: the middle legs' coxa at 0 rad = centre tick 512
	testenv.WaitFor(t, 5*time.Second, "sitting goals", func() bool {
		return bus.Word(14, dynamixel.AddrGoalPosition) == 512 && bus.Word(15, dynamixel.AddrGoalPosition) == 512 &&
			bus.Word(16, dynamixel.AddrGoalPosition) != 512
	})
	call("stand_up")
	waitState("Walking")
	if v := bus.Word(8, dynamixel.AddrMovingSpeed); v != 0 {
		t.Fatalf("moving speed %d after standing up, want 0 (maximum)", v)
	}
	femurStanding := bus.Word(16, dynamixel.AddrGoalPosition)
	call("sit_down")
	waitState("Sitting")
	if bus.Word(16, dynamixel.AddrGoalPosition) == femurStanding {
		t.Fatal("femur goal unchanged between standing and sitting")
	}
	call("start_stop")
	waitState("Idle")
	testenv.WaitFor(t, 5*time.Second, "torque off", func() bool { return allTorque(0) })

	child.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no exit on SIGINT\n%s", out.String())
	}
	if !allTorque(0) {
		t.Fatal("torque left on after shutdown")
	}
	t.Logf("motion_control output:\n%s", out.String())
}
