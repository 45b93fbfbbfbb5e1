package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
)

// topic pub with "auto" (or "now") stamps every publication with the time
// it goes out, as ros2 topic pub does, not once for the whole run: a
// receiver that drops stale commands (a stamped cmd_vel) keeps taking them.
func TestCLI_PubRestampsAutoEveryPublication(t *testing.T) {
	t.Parallel() // a domain of its own
	domain := testenv.Domain(t)
	bin := cliBins(t)
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = rc.Spin(ctx) }()
	n, err := rc.NewNode("restamp_test", "")
	if err != nil {
		t.Fatal(err)
	}
	stamps := make(chan time.Time, 100)
	if _, err := ros.NewSubscription(n, "/cli_stamped", ros.QoSDefault, func(m *geometry_msgs_msg.TwistStamped) {
		stamps <- m.Header.Stamp.AsTime()
	}); err != nil {
		t.Fatal(err)
	}
	cliStart(t, bin, domain, "fsmnodes", "topic", "pub", "/cli_stamped", "geometry_msgs/msg/TwistStamped",
		"{header: auto, twist: {linear: {x: 0.1}}}", "-r", "10")
	var got []time.Time
	timeout := time.After(60 * time.Second)
	for len(got) < 5 {
		select {
		case s := <-stamps:
			got = append(got, s)
		case <-timeout:
			t.Fatalf("%d messages within 60 s", len(got))
		}
	}
	for i := 1; i < len(got); i++ {
		if !got[i].After(got[i-1]) {
			t.Fatalf("stamps %v: publication %d is not stamped later than the one before", got, i+1)
		}
	}
	if age := time.Since(got[len(got)-1]); age < 0 || age > time.Minute {
		t.Errorf("the last stamp %v is %v old: want the time it went out", got[len(got)-1], age)
	}
}
