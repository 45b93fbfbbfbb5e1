package rsmnode

import (
	"context"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/cmdvel/cmdvelnode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// CmdVelReverseNodeName is the name of the reverse-driving relay node.
const CmdVelReverseNodeName = "cmd_vel_reverse"

// DefaultReverseTimeout is the relay's cmd_vel_timeout: diff_drive_controller's
// default command timeout.
const DefaultReverseTimeout = 500 * time.Millisecond

// SetupCmdVelReverse turns n into the reverse-driving relay of the
// original's additions node (rsm.ReverseRelay): it subscribes
// <autonomy_cmd_vel_topic>_reverse, the output of a second navigation
// stack that drives backwards (reverse_navigation_action), and publishes
// each command on <autonomy_cmd_vel_topic> with the linear part negated;
// it serves rsm/setNavigationToReverse ("Mode set") for the service
// provider's setReverseMode. Commands are checked first: NaN/Inf becomes a
// stop, finite values beyond max_linear_velocity / max_angular_velocity are
// clamped (counted as commands_rejected on /diagnostics). With
// enable_stamped_cmd_vel both topics are geometry_msgs/TwistStamped: a
// command stamped longer ago than cmd_vel_timeout is not relayed (it would
// leave with a fresh stamp), the others leave stamped with the node clock's
// now, frame frame_id.
func SetupCmdVelReverse(_ context.Context, n *ros.Node) error {
	log := n.Logger()
	d := ros.NewDeclarer(n)
	topic := param.Declare(d, "autonomy_cmd_vel_topic", "autonomy/cmd_vel",
		param.ReadOnly("the control mux's autonomy input; the reverse stack publishes on this name + \"_reverse\"",
			"the topics are subscribed and advertised at start-up"), nonEmpty)
	limits := cmdvelnode.DeclareLimits(d, cmdvel.Limits{Linear: rsm.DefaultMaxLinearVelocity, Angular: rsm.DefaultMaxAngularVelocity}, "a relayed command")
	stamped := cmdvelnode.DeclareStamped(d, cmdvelnode.ParamStamped, "the input and the output")
	frame := cmdvelnode.DeclareFrame(d, "frame_id", cmdvelnode.DefaultFrame)
	timeout := param.DeclareLiveDuration(d, "cmd_vel_timeout", DefaultReverseTimeout, param.Descriptor{
		Description: "with " + cmdvelnode.ParamStamped + ": seconds a stamped input command may be old; an older one is " +
			"ignored, not relayed with a fresh stamp (0 disables; live)",
		FloatRange: param.Floats(0, 3600)}, nil)
	if err := d.Err(); err != nil {
		return err
	}
	relay, err := rsm.NewReverseRelay(limits.Get())
	if err != nil {
		return err
	}
	out, err := cmdvelnode.Advertise(n, topic, cmdvelnode.PublisherOptions{Stamped: stamped, Frame: frame})
	if err != nil {
		return err
	}
	cmdCtr := n.Counter(ros.CounterCommandsRejected)
	var bad uint64
	clk := n.Clock()
	in := topic + "_reverse"
	if _, err := cmdvelnode.Subscribe(n, in, cmdvelnode.SubscriptionOptions{Stamped: stamped, Input: "reverse cmd_vel",
		Timeout: timeout.Get}, func(c cmdvelnode.Command) {
		if l, ok := limits.Changed(); ok { // live parameters apply from the next command
			_ = relay.SetLimits(l) // valid: the group checked it with cmdvel.Limits.Validate
		}
		tw, report := relay.Command(rsmTwist(c.Twist), clk.Now())
		if report != nil {
			log.Warnf("%v", report)
		}
		if c := relay.Rejected() + relay.Clamped(); c > bad {
			cmdCtr.Add(c - bad)
			bad = c
		}
		if err := out.Publish(cmdvelTwist(tw)); err != nil {
			log.Errorf("publish %s: %v", topic, err)
		}
	}); err != nil {
		return err
	}
	_, err = ros.NewService(n, Namespace+"setNavigationToReverse", std_srvs_srv.SetBool,
		func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
			was := relay.Reverse()
			r := relay.SetNavigationToReverse(req.Data)
			if was != req.Data {
				log.Infof("reverse driving %s (%v)", map[bool]string{true: "on", false: "off"}[req.Data], relay)
			}
			return &std_srvs_srv.SetBool_Response{Success: r.Success, Message: r.Message}, nil
		})
	if err != nil {
		return err
	}
	log.Infof("relaying %s to %s with the linear part negated", in, topic)
	return nil
}

// RunCmdVelReverse runs the cmd_vel_reverse relay until shutdown.
func RunCmdVelReverse(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, CmdVelReverseNodeName, SetupCmdVelReverse)
}
