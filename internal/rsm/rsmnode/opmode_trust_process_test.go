package rsmnode

import (
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// TestFakeOperationMode_Ignored_Process (issue 25, finding 6): a fake
// rsm/operationMode at 100 Hz (emergency stop) flapped rsmNode between
// Idle and Emergency Stop 92 times in 5 s. rsmNode follows only the mux's
// publisher (operation_mode_publisher): with the fake running for 2 s it
// stays Idle, and its foreign_samples counter counts the fake's messages.
func TestFakeOperationMode_Ignored_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	t.Parallel() // a domain of its own
	start(t, domain, "service_provider", "--ros-args", "-p", "waypoints_file:=''")
	start(t, domain, "robot_control_mux")
	start(t, domain, "state_interface")
	start(t, domain, "rsm_boot", "--ros-args", "-p", "wait_time:=0.1")

	n, ctx := rostest.Node(t, domain, "fake_operation_mode")
	publishRobotAtOrigin(t, n)
	states := &recorder[string]{}
	if _, err := ros.NewSubscription(n, "/rsm/stateInfo", ros.QoSDefault, func(m *std_msgs_msg.String) { states.add(m.Data) }); err != nil {
		t.Fatal(err)
	}
	diag := rostest.WatchCounters(t, n, "/"+StateInterfaceNodeName)
	current := stateInfo(t, ctx, n)
	testenv.WaitFor(t, waitLimit, "rsmNode Idle after boot", func() bool { return current() == "Idle" })

	fake, err := ros.NewPublisher[rsm_msgs_msg.OperationMode](n, "/rsm/operationMode", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, waitLimit, "rsmNode matching the fake", func() bool { c, err := fake.SubscriptionCount(); return err == nil && c > 0 })
	states.clear()
	sent := 0
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); sent++ {
		if err := fake.Publish(&rsm_msgs_msg.OperationMode{EmergencyStop: true, Mode: rsm_msgs_msg.OperationMode_STOPPED}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the last fake messages reach rsmNode's cycle
	for _, s := range states.get() {
		if strings.Contains(s, "Emergency") {
			t.Fatalf("rsmNode followed the fake operation mode: states %v", states.get())
		}
	}
	testenv.WaitFor(t, waitLimit, "foreign_samples of rsmNode to count the fake's messages", func() bool {
		return diag.Get(ros.CounterForeignSamples) >= uint64(sent)/2
	})
	t.Logf("%d fake operation modes in 2 s: rsmNode counted %d foreign samples; states meanwhile: %v", sent, diag.Get(ros.CounterForeignSamples), states.get())
	if got := current(); got != "Idle" {
		t.Errorf("rsmNode in %q after the fake, want Idle", got)
	}
}
