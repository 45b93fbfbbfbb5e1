package simtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// eventLog records what the test saw, in order.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// TestExploration_InterruptMode_GoalObsoleteReplans runs exploration in the
// Interrupt mode with the real executables (simulator, navigator, frontier
// detector and the four RSM nodes): the frontier detector publishes
// rsm/goalObsolete only in the Interrupt mode, and once the frontier of the
// goal being driven to has been seen, E: Navigation gives the goal up
// (ABORTED on rsm/explorationGoalStatus, which nothing else aborts here)
// and exploration goes on with a new goal.
func TestExploration_InterruptMode_GoalObsoleteReplans(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: seven processes and a minute of simulated exploration")
	}
	t.Parallel()
	domain := testenv.Domain(t)
	start(t, domain, "diff_drive_sim")
	start(t, domain, "simple_navigator")
	start(t, domain, "frontier_detector")
	start(t, domain, "robot_control_mux", "-p", "initial_operation_mode:=1")
	start(t, domain, "service_provider", "-p", "robot_frame:=base_footprint")
	start(t, domain, "state_interface")
	start(t, domain, "rsm_boot", "-p", "wait_time:=0.3")
	n := newNode(t, domain, "interrupt_test")

	var log eventLog
	var mu sync.Mutex
	var obsoleteMsgs, goalMsgs int
	subs := []error{}
	_, err := ros.NewSubscription(n, "/rsm/stateInfo", ros.QoSDefault.KeepLast(50), func(m *std_msgs_msg.String) {
		log.add("state " + m.Data)
	})
	subs = append(subs, err)
	_, err = ros.NewSubscription(n, "/rsm/goalObsolete", ros.QoSDefault, func(m *std_msgs_msg.Bool) {
		mu.Lock()
		obsoleteMsgs++
		mu.Unlock()
		if m.Data {
			log.add("obsolete")
		}
	})
	subs = append(subs, err)
	_, err = ros.NewSubscription(n, "/rsm/explorationGoals", ros.QoSDefault, func(*geometry_msgs_msg.PoseArray) {
		mu.Lock()
		goalMsgs++
		mu.Unlock()
	})
	subs = append(subs, err)
	var lastStatus uint8 = 255
	_, err = ros.NewSubscription(n, "/rsm/explorationGoalStatus", ros.QoSDefault, func(m *rsm_msgs_msg.GoalStatus) {
		mu.Lock()
		changed := m.GoalStatus != lastStatus
		lastStatus = m.GoalStatus
		mu.Unlock()
		if changed && m.GoalStatus == rsm_msgs_msg.GoalStatus_ABORTED {
			log.add("aborted")
		}
	})
	subs = append(subs, err)
	for _, err := range subs {
		if err != nil {
			t.Fatal(err)
		}
	}
	counts := func() (obsolete, goals int) {
		mu.Lock()
		defer mu.Unlock()
		return obsoleteMsgs, goalMsgs
	}
	call := func(name string, data bool) *std_srvs_srv.SetBool_Response {
		t.Helper()
		c, err := ros.NewClient(n, name, std_srvs_srv.SetBool)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.WaitForService(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r, err := c.Call(ctx, &std_srvs_srv.SetBool_Request{Data: data})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	infoCli, err := ros.NewClient(n, "/rsm/stateInfo", std_srvs_srv.Trigger)
	if err != nil {
		t.Fatal(err)
	}
	stateInfo := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		r, err := infoCli.Call(ctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			return ""
		}
		return r.Message
	}
	testenv.WaitFor(t, 60*time.Second, "RSM in Idle", func() bool { return stateInfo() == "Idle" })

	// Finish mode (the default): the detector publishes no verdicts.
	_, g0 := counts()
	testenv.WaitFor(t, 30*time.Second, "three frontier updates", func() bool { _, g := counts(); return g >= g0+3 })
	if o, _ := counts(); o != 0 {
		t.Fatalf("%d rsm/goalObsolete messages in the Finish mode, want none", o)
	}

	if r := call("/rsm/setExplorationMode", true); !r.Success {
		t.Fatalf("setExplorationMode: %+v", r)
	}
	mark := len(log.get())
	if r := call("/rsm/startStopExploration", true); !r.Success {
		t.Fatalf("startStopExploration: %+v", r)
	}
	// An obsolete goal is given up (ABORTED) and a new one is driven to.
	testenv.WaitFor(t, 3*time.Minute, "an obsolete goal given up, then a new navigation", func() bool {
		ev := log.get()[mark:]
		step := 0
		for _, e := range ev {
			if e == "state Idle" && step < 3 {
				t.Fatalf("exploration ended without an obsolete goal: %q", ev)
			}
			switch {
			case step == 0 && e == "state E: Navigation":
				step = 1
			case step == 1 && e == "obsolete":
				step = 2
			case step == 2 && e == "aborted":
				step = 3
			case step == 3 && e == "state E: Navigation":
				return true
			}
		}
		return false
	})
	if o, _ := counts(); o == 0 {
		t.Error("no rsm/goalObsolete messages in the Interrupt mode")
	}
	if r := call("/rsm/startStopExploration", false); !r.Success {
		t.Errorf("stop exploration: %+v", r)
	}
	t.Logf("events: %q", log.get())
}
