package rsmnode

import (
	"context"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// rsm_boot on use_sim_time counts wait_time in sim time from the first
// /clock it sees: still booting before any /clock and while sim time stands
// still, finished once wait_time of sim time has passed.
func TestBoot_WaitTimeIsSimTime(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel() // a domain of its own
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true,
		Args:      []string{"--ros-args", "-p", "use_sim_time:=true", "-p", "wait_time:=2.0", "-p", "exit_when_finished:=false"},
		LogOutput: testenv.LogWriter{T: t, Prefix: "boot: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	bn, err := rc.NewNode(BootNodeName, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := serveBoot(bn, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = rc.Spin(ctx) }()

	n, _ := rostest.Node(t, domain, "boot_simtime_test")
	clock, err := ros.NewPublisher[rosgraph_msgs_msg.Clock](n, "/clock", ros.QoSClock)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ros.NewClient(n, "/"+Namespace+"bootUpFinished", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	booted := func() bool {
		t.Helper()
		r, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Success
	}
	// setSim publishes sim time s until the boot node's clock shows it.
	setSim := func(s float64) {
		t.Helper()
		at := time.Unix(0, 0).Add(time.Duration(s * float64(time.Second)))
		testenv.WaitFor(t, waitLimit, "the boot node's clock to follow /clock", func() bool {
			if err := clock.Publish(&rosgraph_msgs_msg.Clock{Clock: builtin_interfaces_msg.TimeOf(at)}); err != nil {
				t.Fatal(err)
			}
			return bn.Clock().Now().Equal(at)
		})
	}
	if booted() {
		t.Fatal("Finished before any /clock")
	}
	setSim(100)
	if booted() {
		t.Fatal("Finished at the first /clock")
	}
	setSim(101.5)
	for i := 0; i < 5; i++ { // sim time stands still: wall time does not count
		if booted() {
			t.Fatal("Finished 1.5 s of sim time after the first /clock (wait_time 2 s)")
		}
		time.Sleep(100 * time.Millisecond)
	}
	setSim(102)
	if !booted() {
		t.Fatal("still booting 2 s of sim time after the first /clock (wait_time 2 s)")
	}
}
