// Package tf is a small TF buffer: it keeps the latest transform of every
// frame (from /tf and /tf_static) and looks up the pose of one frame in
// another through the chain of transforms, like tf2's lookupTransform at
// time zero ("latest"). It has no interpolation and no history; the RSM
// service provider only needs the latest map → robot_frame pose.
//
// A transform from /tf lives only as long as its publisher keeps sending
// it: it expires MaxAge (tf2's default cache time, 10 s) after it was
// received, and a frame's static transform (from /tf_static), which a
// dynamic one of the same frame hides while it is fresh, applies again.
// So a fake map → odom published on /tf for a while does not outlive its
// publisher. Expiry counts the time of receipt, not the stamp, which the
// sender chooses. The number of frames is bounded (MaxFrames).
//
// A Buffer is not safe for concurrent use; the node calls it from its
// callback goroutine.
package tf

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
)

// Transform places Child in Parent: a point p in Child is
// Rotation.Rotate(p) + Translation in Parent (geometry_msgs/TransformStamped).
type Transform struct {
	Parent, Child string
	Translation   geom.Vec3
	Rotation      geom.Quat
	Stamp         time.Time
	Static        bool // from /tf_static
}

// ErrNoPath is returned (wrapped) when two frames are not connected.
var ErrNoPath = errors.New("frames are not connected")

// ErrUnknownFrame is returned (wrapped) for a frame no transform mentions.
var ErrUnknownFrame = errors.New("unknown frame")

// DefaultMaxAge is how long a transform from /tf stays usable after it was
// received (tf2's default cache time).
const DefaultMaxAge = 10 * time.Second

// DefaultMaxFrames bounds the frames a buffer keeps.
const DefaultMaxFrames = 10000

// ErrTooManyFrames is returned (wrapped) by Set for a new frame beyond
// MaxFrames.
var ErrTooManyFrames = errors.New("too many frames")

// Buffer holds the latest transform to every child frame: the static one
// and the dynamic one, which hides the static one until it expires.
type Buffer struct {
	// MaxAge is how long a dynamic transform stays usable after it was
	// received (NewBuffer: DefaultMaxAge).
	MaxAge time.Duration
	// MaxFrames bounds the child frames kept (NewBuffer: DefaultMaxFrames).
	MaxFrames int
	// Now is the clock of receipt and expiry (NewBuffer: time.Now).
	Now func() time.Time

	static   map[string]Transform // by child frame
	dynamic  map[string]Transform // by child frame
	received map[string]time.Time // of the dynamic transforms
}

// NewBuffer returns an empty buffer.
func NewBuffer() *Buffer {
	return &Buffer{MaxAge: DefaultMaxAge, MaxFrames: DefaultMaxFrames, Now: time.Now,
		static: map[string]Transform{}, dynamic: map[string]Transform{}, received: map[string]time.Time{}}
}

// expire drops the dynamic transforms older than MaxAge.
func (b *Buffer) expire() {
	now := b.Now()
	for f, at := range b.received {
		if age := now.Sub(at); age > b.MaxAge || age < -b.MaxAge { // a clock jump back expires too
			delete(b.dynamic, f)
			delete(b.received, f)
		}
	}
}

// link returns the transform in force for child frame f (after expire).
func (b *Buffer) link(f string) (Transform, bool) {
	if t, ok := b.dynamic[f]; ok {
		return t, true
	}
	t, ok := b.static[f]
	return t, ok
}

// children returns every child frame with a transform in force.
func (b *Buffer) children() map[string]Transform {
	all := make(map[string]Transform, len(b.static)+len(b.dynamic))
	for f, t := range b.static {
		all[f] = t
	}
	for f, t := range b.dynamic {
		all[f] = t
	}
	return all
}

// Frame normalises a frame id: tf2 in ROS 2 rejects a leading "/", which
// ROS 1 configurations (robot_frame "/base_link") still carry.
func Frame(id string) string { return strings.TrimLeft(strings.TrimSpace(id), "/") }

// Set stores t as the latest transform of its child frame. Empty or equal
// frame names, NaN/Inf and a zero rotation are rejected; the rotation is
// normalised. A transform that would close a loop is rejected.
func (b *Buffer) Set(t Transform) error {
	t.Parent, t.Child = Frame(t.Parent), Frame(t.Child)
	switch {
	case t.Parent == "" || t.Child == "":
		return fmt.Errorf("transform %q → %q: empty frame id", t.Parent, t.Child)
	case t.Parent == t.Child:
		return fmt.Errorf("transform %q → %q: parent and child are the same frame", t.Parent, t.Child)
	}
	if err := rsm.ValidateVec3(t.Translation); err != nil {
		return fmt.Errorf("transform %q → %q: translation: %w", t.Parent, t.Child, err)
	}
	if err := rsm.ValidateQuat(t.Rotation); err != nil {
		return fmt.Errorf("transform %q → %q: rotation: %w", t.Parent, t.Child, err)
	}
	if t.Rotation == (geom.Quat{}) {
		return fmt.Errorf("transform %q → %q: rotation is the zero quaternion", t.Parent, t.Child)
	}
	t.Rotation = t.Rotation.Normalized()
	b.expire()
	if _, ok := b.link(t.Child); !ok && len(b.static)+len(b.dynamic) >= b.MaxFrames {
		return fmt.Errorf("transform %q → %q: %w (%d kept)", t.Parent, t.Child, ErrTooManyFrames, b.MaxFrames)
	}
	// Walking up from the new parent must not reach the child.
	for f, n := t.Parent, 0; n <= len(b.static)+len(b.dynamic); n++ {
		if f == t.Child {
			return fmt.Errorf("transform %q → %q: would close a loop", t.Parent, t.Child)
		}
		l, ok := b.link(f)
		if !ok {
			break
		}
		f = l.Parent
	}
	if t.Static {
		b.static[t.Child] = t
		return nil
	}
	b.dynamic[t.Child] = t
	b.received[t.Child] = b.Now()
	return nil
}

// Len returns the number of child frames with a transform in force.
func (b *Buffer) Len() int {
	b.expire()
	return len(b.children())
}

// known reports whether f appears as a child or a parent.
func (b *Buffer) known(f string) bool {
	if _, ok := b.link(f); ok {
		return true
	}
	for _, l := range b.children() {
		if l.Parent == f {
			return true
		}
	}
	return false
}

// toRoot returns the pose of frame f in the root of its tree, and the
// root's name.
func (b *Buffer) toRoot(f string) (rsm.Pose, string) {
	p := rsm.Pose{Orientation: geom.Identity}
	for n := 0; n <= len(b.static)+len(b.dynamic); n++ {
		l, ok := b.link(f)
		if !ok {
			return p, f
		}
		p = compose(l, p)
		f = l.Parent
	}
	return p, f // unreachable: Set keeps the graph a forest
}

// compose returns pose p (given in l.Child) expressed in l.Parent.
func compose(l Transform, p rsm.Pose) rsm.Pose {
	return rsm.Pose{
		Position:    l.Rotation.Rotate(p.Position).Add(l.Translation),
		Orientation: l.Rotation.Mul(p.Orientation).Normalized(),
	}
}

// Lookup returns the pose of frame source in frame target (the transform
// target → source, as tf2's lookupTransform(target, source, latest)).
func (b *Buffer) Lookup(target, source string) (rsm.Pose, error) {
	target, source = Frame(target), Frame(source)
	b.expire()
	if target == source {
		return rsm.Pose{Orientation: geom.Identity}, nil
	}
	for _, f := range []string{target, source} {
		if !b.known(f) {
			return rsm.Pose{}, fmt.Errorf("lookup %q → %q: frame %q: %w", target, source, f, ErrUnknownFrame)
		}
	}
	ps, rootS := b.toRoot(source)
	pt, rootT := b.toRoot(target)
	if rootS != rootT {
		return rsm.Pose{}, fmt.Errorf("lookup %q → %q: %w (trees rooted at %q and %q)", target, source, ErrNoPath, rootT, rootS)
	}
	inv := pt.Orientation.Conj()
	return rsm.Pose{
		Position:    inv.Rotate(ps.Position.Sub(pt.Position)),
		Orientation: inv.Mul(ps.Orientation).Normalized(),
	}, nil
}

// PoseSource adapts a Buffer to rsm.PoseSource: the pose of Robot in Map.
type PoseSource struct {
	Buffer     *Buffer
	Map, Robot string
}

// RobotPose returns the latest pose of the robot frame in the map frame.
func (s PoseSource) RobotPose() (rsm.Pose, error) { return s.Buffer.Lookup(s.Map, s.Robot) }
