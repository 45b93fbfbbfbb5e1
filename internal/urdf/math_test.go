package urdf

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

func quatNear(t *testing.T, got, want geom.Quat) {
	t.Helper()
	// q and −q are the same rotation
	if got.W*want.W+got.X*want.X+got.Y*want.Y+got.Z*want.Z < 0 {
		want = geom.Quat{X: -want.X, Y: -want.Y, Z: -want.Z, W: -want.W}
	}
	if !near(got.X, want.X) || !near(got.Y, want.Y) || !near(got.Z, want.Z) || !near(got.W, want.W) {
		t.Fatalf("quaternion %+v, want %+v", got, want)
	}
}

func vecNear(t *testing.T, got, want geom.Vec3, eps float64) {
	t.Helper()
	if d := got.Sub(want); math.Abs(d.X) > eps || math.Abs(d.Y) > eps || math.Abs(d.Z) > eps {
		t.Fatalf("vector %v, want %v", got, want)
	}
}

func TestTransform_MulInverseApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rnd := func() Transform {
		return Transform{
			Translation: geom.Vec3{X: rng.NormFloat64(), Y: rng.NormFloat64(), Z: rng.NormFloat64()},
			Rotation:    geom.QuatFromRPY(rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()),
		}
	}
	for range 500 {
		a, b := rnd(), rnd()
		p := geom.Vec3{X: rng.NormFloat64(), Y: rng.NormFloat64(), Z: rng.NormFloat64()}
		// (a·b)(p) = a(b(p))
		vecNear(t, a.Mul(b).Apply(p), a.Apply(b.Apply(p)), 1e-12)
		// a⁻¹(a(p)) = p
		vecNear(t, a.Inverse().Apply(a.Apply(p)), p, 1e-12)
		id := a.Mul(a.Inverse())
		vecNear(t, id.Translation, geom.Vec3{}, 1e-12)
		quatNear(t, id.Rotation.Normalized(), geom.Identity)
	}
	// a known composition: translate 1 along x of a frame turned 90° about z
	a := Transform{Translation: geom.Vec3{X: 1, Y: 0, Z: 0}, Rotation: geom.QuatFromRPY(0, 0, math.Pi/2)}
	b := Transform{Translation: geom.Vec3{X: 1, Y: 0, Z: 0}, Rotation: geom.Identity}
	vecNear(t, a.Mul(b).Translation, geom.Vec3{X: 1, Y: 1, Z: 0}, 1e-15)
}
