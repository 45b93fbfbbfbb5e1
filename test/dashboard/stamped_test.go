package dashboard

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
)

// The demo with enable_stamped_cmd_vel:=true: the RSM panel's and the
// hexapod panel's teleoperation pads read the receiver's parameter and
// publish geometry_msgs/TwistStamped, and the arrow keys still drive the
// diffbot (a Twist pad would never match the stamped mux).
func TestDashboardTeleopStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo, the bridge and a browser")
	}
	chrome := findChromium(t)
	domain := testenv.Domain(t)
	port := freePort(t)
	testenv.LaunchDemo(t, domain, fmt.Sprintf("foxglove_port:=%d", port), "enable_stamped_cmd_vel:=true")

	d := domain
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &d, NoSignals: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	go func() { _ = rc.Spin(context.Background()) }()
	n, err := rc.NewNode("dashboard_stamped_test", "")
	if err != nil {
		t.Fatal(err)
	}
	var odom testenv.Latest[nav_msgs_msg.Odometry]
	if _, err := ros.NewSubscription(n, "/diffbot/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { odom.Set(m, "") }); err != nil {
		t.Fatal(err)
	}

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromiumOptions(t, chrome, 1440, 1000)...)
	defer cancelAlloc()
	// chromedp's errors about CDP events it cannot decode are noise here.
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancelBrowser()
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	b := &browser{t: t, ctx: bctx, base: fmt.Sprintf("http://127.0.0.1:%d", port), dir: t.TempDir(), shot: map[string][]byte{}}
	waitListening(t, port)
	b.open("ns=/diffbot&view=robot")
	b.waitText("#rsm-state", "RSM to finish booting", 60*time.Second, func(s string) bool { return s == "Idle" })
	padType := func(panel string) func(string) bool {
		return func(string) bool {
			var typ string
			b.eval(fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.type || ""`, panel+" .teleop"), &typ)
			return typ == "geometry_msgs/msg/TwistStamped"
		}
	}
	b.waitText("body", "the RSM pad to follow the mux's enable_stamped_cmd_vel", 30*time.Second, padType("#panel-rsm"))
	testenv.WaitFor(t, 30*time.Second, "odometry", func() bool { return odom.Get() != nil })
	x0 := odom.Get().Pose.Pose.Position.X
	b.run("press ArrowUp", keyEvent(input.KeyRawDown, "ArrowUp", 38))
	testenv.WaitFor(t, 20*time.Second, "the robot to move forward on the pad's TwistStamped commands", func() bool {
		return odom.Get().Pose.Pose.Position.X-x0 > 0.2
	})
	b.run("release ArrowUp", keyEvent(input.KeyUp, "ArrowUp", 38))

	b.show("ns=/hexapod&view=robot")
	b.waitText("body", "the hexapod pad to follow the controller's enable_stamped_cmd_vel", 30*time.Second, padType("#panel-hexapod"))
}
