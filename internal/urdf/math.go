package urdf

import (
	"math"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// Transform is a rigid transform from a child frame to its parent frame: a
// point p of the child is Rotation·p + Translation in the parent, the
// meaning of geometry_msgs/Transform in a TF message.
type Transform struct {
	Translation geom.Vec3
	Rotation    geom.Quat
}

// Identity is the transform that changes nothing.
var Identity = Transform{Rotation: geom.Identity}

// Mul returns a·b: b's child frame expressed in a's parent frame.
func (a Transform) Mul(b Transform) Transform {
	return Transform{
		Translation: a.Rotation.Rotate(b.Translation).Add(a.Translation),
		Rotation:    a.Rotation.Mul(b.Rotation),
	}
}

// Apply maps a point from the child frame to the parent frame.
func (a Transform) Apply(p geom.Vec3) geom.Vec3 { return a.Rotation.Rotate(p).Add(a.Translation) }

// Inverse returns the transform from parent to child.
func (a Transform) Inverse() Transform {
	r := a.Rotation.Conj()
	return Transform{Translation: r.Rotate(a.Translation).Scale(-1), Rotation: r}
}

// Finite reports whether every component of t is finite.
func (a Transform) Finite() bool {
	for _, v := range []float64{a.Translation.X, a.Translation.Y, a.Translation.Z,
		a.Rotation.X, a.Rotation.Y, a.Rotation.Z, a.Rotation.W} {
		if !finite(v) {
			return false
		}
	}
	return true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
