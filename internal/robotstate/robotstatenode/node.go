// Package robotstatenode adapts package rsp to ROS 2 as the robot_state_publisher
// node, with the parameters and topics of ROS 2's robot_state_publisher:
//
//   - parameters robot_description (the URDF text; required),
//     publish_frequency (20.0 Hz, in (0, 1000]), frame_prefix ("") and
//     ignore_timestamp (false); all may be changed at run time, and a new
//     robot_description is checked before it is accepted;
//   - publishes robot_description (std_msgs/String, reliable, transient
//     local, depth 1) whenever the description is set, /tf_static
//     (reliable, transient local, depth 1, the whole static set in one
//     message, as tf2_ros's StaticTransformBroadcaster) and /tf (reliable,
//     depth 100);
//   - subscribes joint_states (sensor_msgs/JointState, sensor-data QoS).
//
// /tf and /tf_static are absolute as in tf2_ros; a launch file remaps them
// (/tf:=tf) to keep robots in namespaces apart.
package robotstatenode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/robotstate"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/urdf"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

// Name is the default node name.
const Name = "robot_state_publisher"

// Topic names and QoS of robot_state_publisher.
const (
	TopicDescription = "robot_description"
	TopicJointStates = "joint_states"
	TopicTF          = "/tf"
	TopicTFStatic    = "/tf_static"
)

// QoS profiles: the description and /tf_static are latched (a late
// subscriber gets the last message), /tf keeps the last 100 as
// tf2_ros's TransformBroadcaster.
var (
	QoSDescription = ros.QoSLatched
	QoSTFStatic    = ros.QoSLatched
	QoSTF          = ros.QoSDefault.KeepLast(100)
)

// warnEvery is the least time between two warnings of one kind.
const warnEvery = 5 * time.Second

type statePublisher struct {
	n        *ros.Node
	pub      *robotstate.Publisher
	descPub  *ros.Publisher[std_msgs_msg.String]
	tfPub    *ros.Publisher[tf2_msgs_msg.TFMessage]
	tfStatic *ros.Publisher[tf2_msgs_msg.TFMessage]

	unknownSeen map[string]bool
	lastWarn    map[string]time.Time
	suppressed  map[string]int
}

// Setup turns n into robot_state_publisher.
func Setup(_ context.Context, n *ros.Node) error {
	// All four are live, as in robot_state_publisher: a change is checked
	// (checkDescription, robotstate.ValidFrequency) and applied at once by changed.
	d := ros.NewDeclarer(n)
	desc := param.DeclareLive(d, "robot_description", "", param.Descriptor{
		Description: "the robot's URDF (XML text) (live: a new one is parsed and published at once)"}, checkDescription).Get()
	cfg := robotstate.DefaultConfig()
	cfg.PublishFrequency = param.DeclareLive(d, "publish_frequency", robotstate.DefaultPublishFrequency, param.Descriptor{
		Description: "the most often a joint's transform is published on /tf, Hz (0 exclusive to 1000) (live)"},
		robotstate.ValidFrequency).Get()
	cfg.FramePrefix = param.DeclareLive(d, "frame_prefix", "", param.Descriptor{
		Description: "prefix of every published frame name (live)"}, nil).Get()
	cfg.IgnoreTimestamp = param.DeclareLive(d, "ignore_timestamp", false, param.Descriptor{
		Description: "publish every joint_states message whatever its stamp (live)"}, nil).Get()
	if err := d.Err(); err != nil {
		return err
	}
	model, err := urdf.Parse([]byte(desc))
	if err != nil {
		return err
	}
	pub, err := robotstate.New(model, cfg)
	if err != nil {
		return err
	}
	s := &statePublisher{n: n, pub: pub, unknownSeen: map[string]bool{},
		lastWarn: map[string]time.Time{}, suppressed: map[string]int{}}
	if s.descPub, err = ros.NewPublisher[std_msgs_msg.String](n, TopicDescription, QoSDescription); err != nil {
		return err
	}
	if s.tfPub, err = ros.NewPublisher[tf2_msgs_msg.TFMessage](n, TopicTF, QoSTF); err != nil {
		return err
	}
	if s.tfStatic, err = ros.NewPublisher[tf2_msgs_msg.TFMessage](n, TopicTFStatic, QoSTFStatic); err != nil {
		return err
	}
	n.OnParametersChanged(s.changed)
	if _, err := ros.NewSubscription(n, TopicJointStates, ros.QoSSensorData, s.jointStates); err != nil {
		return err
	}
	if err := s.publishDescription(desc); err != nil {
		return err
	}
	if err := s.publishStatic(); err != nil {
		return err
	}
	n.Logger().Infof("robot %q initialized: %d links, root %q, %d moving joints", model.Name, len(model.Links), model.Root, len(model.MovingJoints()))
	return nil
}

// checkDescription accepts a robot_description only if it parses, as
// robot_state_publisher does.
func checkDescription(d string) error {
	if strings.TrimSpace(d) == "" {
		return errors.New("must not be empty " +
			`(pass the URDF text: -p robot_description:="$(cat robot.urdf)", or in a launch file ` +
			`<param name="robot_description" value="$(command 'cat robot.urdf')"/>)`)
	}
	_, err := urdf.Parse([]byte(d))
	return err
}

func (s *statePublisher) changed(ps []ros.Parameter) {
	log := s.n.Logger()
	cfg := s.pub.Config()
	for _, p := range ps {
		switch p.Name {
		case "robot_description":
			m, err := urdf.Parse([]byte(p.Value.Str()))
			if err != nil { // validated before; a race with a second change
				log.Warnf("failed to parse new URDF: %v", err)
				continue
			}
			s.pub.SetModel(m)
			clear(s.unknownSeen)
			if err := s.publishDescription(p.Value.Str()); err != nil {
				log.Warnf("publish robot_description: %v", err)
			}
			if err := s.publishStatic(); err != nil {
				log.Warnf("publish /tf_static: %v", err)
			}
			log.Infof("robot %q initialized: %d links, root %q, %d moving joints", m.Name, len(m.Links), m.Root, len(m.MovingJoints()))
		case "publish_frequency":
			cfg.PublishFrequency = p.Value.Double()
		case "frame_prefix":
			cfg.FramePrefix = p.Value.Str()
		case "ignore_timestamp":
			cfg.IgnoreTimestamp = p.Value.Bool()
		}
	}
	if err := s.pub.SetConfig(cfg); err != nil {
		log.Warnf("%v", err)
	}
}

func (s *statePublisher) publishDescription(d string) error {
	return s.descPub.Publish(&std_msgs_msg.String{Data: d})
}

func (s *statePublisher) publishStatic() error {
	st := s.pub.Static(s.n.Clock().Now().UnixNano())
	return s.tfStatic.Publish(tfMessage(st))
}

func (s *statePublisher) jointStates(m *sensor_msgs_msg.JointState) {
	now := s.n.Clock().Now().UnixNano()
	stamp := int64(m.Header.Stamp.Sec)*int64(time.Second) + int64(m.Header.Stamp.Nanosec)
	r, err := s.pub.JointStates(m.Name, m.Position, stamp, now)
	if err != nil {
		s.warn("invalid", "robot_state_publisher ignored an invalid JointState message: %v", err)
		return
	}
	if len(r.NonFinite) > 0 {
		s.warn("nonfinite", "joint_states: non-finite position of %s left out", strings.Join(r.NonFinite, ", "))
	}
	for _, u := range r.Unknown {
		if !s.unknownSeen[u] {
			s.unknownSeen[u] = true
			s.n.Logger().Debugf("joint_states names %q, which is no moving joint of the robot; ignored", u)
		}
	}
	if len(r.Transforms) == 0 {
		return
	}
	if err := s.tfPub.Publish(tfMessage(r.Transforms)); err != nil {
		s.warn("publish", "publish /tf: %v", err)
	}
}

// warn logs at most once per warnEvery for each kind, counting the rest.
func (s *statePublisher) warn(kind, format string, args ...any) {
	now := time.Now()
	if t, ok := s.lastWarn[kind]; ok && now.Sub(t) < warnEvery {
		s.suppressed[kind]++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if k := s.suppressed[kind]; k > 0 {
		msg += fmt.Sprintf(" (%d more like this not logged)", k)
	}
	s.lastWarn[kind], s.suppressed[kind] = now, 0
	s.n.Logger().Warnf("%s", msg)
}

func tfMessage(ts []robotstate.Stamped) *tf2_msgs_msg.TFMessage {
	out := &tf2_msgs_msg.TFMessage{Transforms: make([]geometry_msgs_msg.TransformStamped, len(ts))}
	for i, t := range ts {
		tr, q := t.Transform.Translation, t.Transform.Rotation
		out.Transforms[i] = geometry_msgs_msg.TransformStamped{
			Header:       std_msgs_msg.Header{Stamp: stampOf(t.Stamp), FrameId: t.Parent},
			ChildFrameId: t.Child,
			Transform: geometry_msgs_msg.Transform{
				Translation: geometry_msgs_msg.Vector3{X: tr.X, Y: tr.Y, Z: tr.Z},
				Rotation:    geometry_msgs_msg.Quaternion{X: q.X, Y: q.Y, Z: q.Z, W: q.W},
			},
		}
	}
	return out
}

func stampOf(ns int64) builtin_interfaces_msg.Time {
	sec, nsec := ns/int64(time.Second), ns%int64(time.Second)
	if nsec < 0 {
		sec, nsec = sec-1, nsec+int64(time.Second)
	}
	return builtin_interfaces_msg.Time{Sec: int32(sec), Nanosec: uint32(nsec)}
}
