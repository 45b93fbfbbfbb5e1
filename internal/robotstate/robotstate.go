// Package robotstate is the behaviour of robot_state_publisher: from a robot's
// URDF model and its joint positions it computes the transforms of every
// link, as ROS 2's robot_state_publisher does.
//
//   - Fixed joints give the static transforms (Static), stamped with the
//     time they are published and accumulated the way tf2_ros's
//     StaticTransformBroadcaster does: a new set replaces transforms with
//     the same child frame and keeps the others. Planar joints count as
//     fixed (kdl_parser turns them into fixed joints); floating joints are
//     skipped.
//   - A joint_states message gives the transforms of the revolute,
//     continuous and prismatic joints it names, plus those of the mimic
//     joints following them, stamped with the message's stamp
//     (JointStates). A message is published only if its stamp is at least
//     one publish period (1/publish_frequency, truncated to whole
//     milliseconds) after the last published stamp of each joint it names,
//     unless IgnoreTimestamp is set; when the clock jumps backwards the
//     joints' last stamps are forgotten.
//   - Every frame name gets FramePrefix.
//
// Unlike ROS 2's node, a joint whose position is not finite is left out
// (and reported) instead of publishing a NaN transform. The package has no
// ROS imports; internal/robotstate/robotstatenode adapts it to topics and parameters.
package robotstate

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/urdf"
)

// DefaultPublishFrequency is robot_state_publisher's default
// publish_frequency in Hz.
const DefaultPublishFrequency = 20.0

// Stamped is one transform of the TF tree: the pose of Child in Parent at
// Stamp (nanoseconds since the epoch of the node's clock; 0 is a valid
// stamp).
type Stamped struct {
	Parent, Child string
	Stamp         int64
	Transform     urdf.Transform
}

// Config holds the parameters of robot_state_publisher other than the
// description.
type Config struct {
	PublishFrequency float64 // Hz, in (0, 1000]
	FramePrefix      string
	IgnoreTimestamp  bool
}

// DefaultConfig returns robot_state_publisher's defaults.
func DefaultConfig() Config { return Config{PublishFrequency: DefaultPublishFrequency} }

// ValidFrequency checks a publish_frequency as robot_state_publisher does.
func ValidFrequency(hz float64) error {
	if !(hz > 0 && hz <= 1000) {
		return fmt.Errorf("publish_frequency %v must be between 0 (exclusive) and 1000", hz)
	}
	return nil
}

// Publisher holds the model and the per-joint publication times. It is not
// safe for concurrent use: a node calls it from its callback goroutine.
type Publisher struct {
	model       *urdf.Model
	cfg         Config
	lastPublish map[string]int64 // joint → stamp of its last published transform
	lastNow     int64            // clock reading at the last joint_states
	static      []Stamped        // accumulated static transforms, without prefix
}

// New returns a publisher for model.
func New(model *urdf.Model, cfg Config) (*Publisher, error) {
	if model == nil {
		return nil, fmt.Errorf("robotstate: no model")
	}
	if err := ValidFrequency(cfg.PublishFrequency); err != nil {
		return nil, err
	}
	return &Publisher{model: model, cfg: cfg, lastPublish: map[string]int64{}}, nil
}

// Model returns the current model.
func (p *Publisher) Model() *urdf.Model { return p.model }

// Config returns the current configuration.
func (p *Publisher) Config() Config { return p.cfg }

// SetModel replaces the model (a new robot_description). Call Static
// afterwards to publish its fixed joints.
func (p *Publisher) SetModel(m *urdf.Model) {
	if m != nil {
		p.model = m
	}
}

// SetConfig replaces the configuration; an invalid frequency is an error
// and changes nothing.
func (p *Publisher) SetConfig(c Config) error {
	if err := ValidFrequency(c.PublishFrequency); err != nil {
		return err
	}
	p.cfg = c
	return nil
}

// interval is the minimum stamp difference between two publications of a
// joint: 1/frequency truncated to milliseconds, as robot_state_publisher
// computes it.
func (p *Publisher) interval() int64 {
	ms := int64(1000.0 / p.cfg.PublishFrequency)
	return ms * int64(time.Millisecond)
}

// Static returns the full set of static transforms to publish on
// /tf_static at time now: the fixed joints of the current model merged
// into the ones published before.
func (p *Publisher) Static(now int64) []Stamped {
	for i := range p.model.Joints {
		j := &p.model.Joints[i]
		if j.Type == urdf.Floating || j.Type.Moving() {
			continue
		}
		s := Stamped{Parent: j.Parent, Child: j.Child, Transform: j.Transform(0)}
		replaced := false
		for k := range p.static {
			if p.static[k].Child == s.Child {
				p.static[k], replaced = s, true
				break
			}
		}
		if !replaced {
			p.static = append(p.static, s)
		}
	}
	out := make([]Stamped, len(p.static))
	for i, s := range p.static {
		s.Stamp = now
		s.Parent, s.Child = p.cfg.FramePrefix+s.Parent, p.cfg.FramePrefix+s.Child
		out[i] = s
	}
	return out
}

// Result is what one joint_states message gives.
type Result struct {
	// Transforms to publish on /tf; empty when the message was throttled
	// or named no joint of the model.
	Transforms []Stamped
	// Throttled is true when the message came sooner than one publish
	// period after the last one for its joints.
	Throttled bool
	// NonFinite names joints left out because their position is NaN or
	// infinite.
	NonFinite []string
	// Unknown names joints of the message that are not moving joints of
	// the model (robot_state_publisher ignores them).
	Unknown []string
}

// JointStates handles one joint_states message: names and positions
// (equal lengths), its stamp and the node's clock reading now (both in
// nanoseconds). A message whose names and positions differ in length is an
// error and publishes nothing.
func (p *Publisher) JointStates(names []string, positions []float64, stamp, now int64) (Result, error) {
	var r Result
	if len(names) != len(positions) {
		if len(positions) == 0 && len(names) > 0 {
			return r, fmt.Errorf("joint_states for joint %q (and %d more) has no positions", names[0], len(names)-1)
		}
		return r, fmt.Errorf("joint_states has %d names but %d positions", len(names), len(positions))
	}
	if now < p.lastNow {
		// time went backwards (a bag restarted, sim time reset): publish again
		clear(p.lastPublish)
	}
	p.lastNow = now

	// the least recently published of the message's joints decides
	last := now
	for _, n := range names {
		if t := p.lastPublish[n]; t < last {
			last = t
		}
	}
	if !p.cfg.IgnoreTimestamp && stamp < last+p.interval() {
		r.Throttled = true
		return r, nil
	}

	given := make(map[string]float64, len(names))
	for i, n := range names {
		q := positions[i]
		if math.IsNaN(q) || math.IsInf(q, 0) {
			r.NonFinite = append(r.NonFinite, n)
			continue
		}
		given[n] = q
	}
	all := p.model.Positions(given)
	for i := range p.model.Joints {
		j := &p.model.Joints[i]
		if !j.Type.Moving() {
			continue
		}
		q, ok := all[j.Name]
		if !ok {
			continue
		}
		tf := j.Transform(q)
		if !tf.Finite() {
			// a mimic multiplier can overflow a finite position
			r.NonFinite = append(r.NonFinite, j.Name)
			continue
		}
		r.Transforms = append(r.Transforms, Stamped{
			Parent: p.cfg.FramePrefix + j.Parent, Child: p.cfg.FramePrefix + j.Child,
			Stamp: stamp, Transform: tf,
		})
	}
	for _, n := range names {
		if j, ok := p.model.Joint(n); !ok || !j.Type.Moving() {
			r.Unknown = append(r.Unknown, n)
		}
		p.lastPublish[n] = stamp
	}
	sort.Strings(r.Unknown)
	return r, nil
}
