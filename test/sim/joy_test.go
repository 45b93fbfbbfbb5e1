package simtest

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/joy"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
)

// TestJoystickToTeleopCmdVel feeds js_event records through a FIFO that
// stands in for /dev/input/js0 and checks that joy publishes them as
// sensor_msgs/Joy and joy_teleop turns them into a Twist on
// /teleoperation/cmd_vel.
func TestJoystickToTeleopCmdVel(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	fifo := filepath.Join(t.TempDir(), "js0")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR never blocks on a FIFO and keeps it open for the reader.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	start(t, domain, "joy", "-p", "dev:="+fifo)
	start(t, domain, "joy_teleop")
	n := newNode(t, domain, "joy_test")

	// sawPressed records whether /joy carried the enable button held with
	// the stick fully up.
	var sawPressed atomic.Bool
	twists := make(chan *geometry_msgs_msg.Twist, 100)
	if _, err := ros.NewSubscription(n, "/joy", ros.QoSDefault, func(m *sensor_msgs_msg.Joy) {
		if len(m.Buttons) > 0 && m.Buttons[0] == 1 && len(m.Axes) > 1 && m.Axes[1] == 1 {
			sawPressed.Store(true)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, "/teleoperation/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.Twist) { twists <- m }); err != nil {
		t.Fatal(err)
	}
	// Enable pressed and stick full up: 0.5 m/s forward with the defaults.
	// Repeat the toggle until the whole chain has matched and delivered.
	deadline := time.After(60 * time.Second)
	var ms uint32
	for {
		ms += 10
		events := []joy.Event{
			{TimeMs: ms, Type: joy.EventButton, Number: 0, Value: 1},
			{TimeMs: ms, Type: joy.EventAxis, Number: 1, Value: -32767},
		}
		for _, e := range events {
			if _, err := w.Write(e.Encode()); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case tw := <-twists:
			if tw.Linear.X == 0 && tw.Angular.Z == 0 {
				continue // the button press alone, before the axis event
			}
			if tw.Linear.X != 0.5 || tw.Angular.Z != 0 {
				t.Fatalf("twist %+v, want linear.x 0.5", tw)
			}
			eventually := time.Now().Add(5 * time.Second)
			for !sawPressed.Load() {
				if time.Now().After(eventually) {
					t.Fatal("teleop published but /joy never showed the button held with the stick up")
				}
				time.Sleep(20 * time.Millisecond)
			}
			return
		case <-time.After(300 * time.Millisecond):
			// Release and retry: a fresh press is a state change.
			for _, e := range []joy.Event{{TimeMs: ms, Type: joy.EventButton, Number: 0, Value: 0},
				{TimeMs: ms, Type: joy.EventAxis, Number: 1, Value: 0}} {
				_, _ = w.Write(e.Encode())
			}
			drain(twists)
		case <-deadline:
			t.Fatal("no Twist on /teleoperation/cmd_vel")
		}
	}
}

func drain[T any](ch chan T) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
