package param

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// IntegerRange constrains an integer (or each element of an integer array)
// to From..To inclusive; with Step > 0 the value must also be From + k*Step
// or equal To (rcl_interfaces/msg/IntegerRange).
type IntegerRange struct {
	From, To int64
	Step     uint64
}

// FloatRange constrains a double (or each element of a double array) to
// From..To inclusive; with Step > 0 the value must also be From + k*Step or
// equal To, compared with a small relative tolerance
// (rcl_interfaces/msg/FloatingPointRange).
type FloatRange struct {
	From, To, Step float64
}

// Descriptor describes a declared parameter (rcl_interfaces/msg/
// ParameterDescriptor). The zero Descriptor is valid: the type is taken from
// the default value, the parameter is writable and statically typed.
type Descriptor struct {
	// Name is filled in by Store.Describe; it is ignored on Declare.
	Name string
	// (optional) Type is the parameter type. Zero means the type of the
	// declared default value. A default of another type is an error.
	Type Type
	// (optional) Description is shown by `ros2 param describe`.
	Description string
	// (optional) AdditionalConstraints is free text about constraints not
	// expressed by the ranges.
	AdditionalConstraints string
	// (optional) ReadOnly parameters can be set only by overrides at
	// declaration time, never through Set.
	ReadOnly bool
	// (optional) ReadOnlyReason says why a read-only parameter cannot
	// change while the node runs; a refused set quotes it. It is not sent
	// on the wire (put it in Description too; ReadOnly does both).
	ReadOnlyReason string
	// (optional) DynamicTyping allows Set to change the type, and allows
	// undeclaring by setting TypeNotSet. Off by default, as in ROS 2.
	DynamicTyping bool
	// (optional) IntegerRange applies to integer and integer array values.
	IntegerRange *IntegerRange
	// (optional) FloatRange applies to double and double array values.
	FloatRange *FloatRange
}

// check validates the descriptor itself.
func (d *Descriptor) check() error {
	if !d.Type.Valid() {
		return fmt.Errorf("descriptor type %d is not a parameter type", d.Type)
	}
	if d.IntegerRange != nil && d.FloatRange != nil {
		return errors.New("descriptor has both an integer and a floating point range")
	}
	if r := d.IntegerRange; r != nil {
		if r.From > r.To {
			return fmt.Errorf("integer range from %d is above to %d", r.From, r.To)
		}
	}
	if r := d.FloatRange; r != nil {
		if math.IsNaN(r.From) || math.IsNaN(r.To) || math.IsNaN(r.Step) {
			return errors.New("floating point range contains NaN")
		}
		if r.From > r.To {
			return fmt.Errorf("floating point range from %g is above to %g", r.From, r.To)
		}
		if r.Step < 0 || math.IsInf(r.Step, 0) {
			return fmt.Errorf("floating point range step %g must be finite and not negative", r.Step)
		}
	}
	return nil
}

// clone returns a deep copy so callers cannot mutate stored ranges.
func (d Descriptor) clone() Descriptor {
	if d.IntegerRange != nil {
		r := *d.IntegerRange
		d.IntegerRange = &r
	}
	if d.FloatRange != nil {
		r := *d.FloatRange
		d.FloatRange = &r
	}
	return d
}

// checkValue checks v against the ranges of d. Type compatibility is
// checked by the caller.
func (d *Descriptor) checkValue(v Value) error {
	if err := v.checkFinite(); err != nil {
		return err
	}
	if r := d.IntegerRange; r != nil {
		switch v.typ {
		case TypeInteger:
			return r.check(v.i)
		case TypeIntegerArray:
			for i, x := range v.ints {
				if err := r.check(x); err != nil {
					return fmt.Errorf("element %d: %w", i, err)
				}
			}
		}
	}
	if r := d.FloatRange; r != nil {
		switch v.typ {
		case TypeDouble:
			return r.check(v.f)
		case TypeDoubleArray:
			for i, x := range v.floats {
				if err := r.check(x); err != nil {
					return fmt.Errorf("element %d: %w", i, err)
				}
			}
		}
	}
	return nil
}

func (r *IntegerRange) check(v int64) error {
	if v < r.From || v > r.To {
		return fmt.Errorf("value %d is outside the integer range [%d, %d]", v, r.From, r.To)
	}
	if r.Step == 0 || v == r.To {
		return nil
	}
	// v >= From, so the difference fits in uint64 even for extreme bounds.
	if (uint64(v)-uint64(r.From))%r.Step != 0 {
		return fmt.Errorf("value %d is not on a step of %d from %d", v, r.Step, r.From)
	}
	return nil
}

func (r *FloatRange) check(v float64) error {
	if math.IsNaN(v) {
		return errors.New("NaN is outside every range")
	}
	if math.IsInf(v, 0) {
		// A declared range is a promise of a usable number; an infinity
		// would pass a comparison with an infinite bound and then overflow
		// whatever is derived from it (a period, a clamp).
		return fmt.Errorf("value %g is outside the floating point range [%g, %g]: not finite", v, r.From, r.To)
	}
	if !(v >= r.From || floatsEqual(v, r.From)) || !(v <= r.To || floatsEqual(v, r.To)) {
		return fmt.Errorf("value %g is outside the floating point range [%g, %g]", v, r.From, r.To)
	}
	if r.Step == 0 || floatsEqual(v, r.To) || floatsEqual(v, r.From) {
		return nil
	}
	k := math.Round((v - r.From) / r.Step)
	if !floatsEqual(v, r.From+k*r.Step) {
		return fmt.Errorf("value %g is not on a step of %g from %g", v, r.Step, r.From)
	}
	return nil
}

// floatsEqual compares with rclcpp's tolerance: |a-b| <= eps*|a+b|*100
// (100 ulps of the pair's magnitude). The tolerance is computed so that it
// never overflows: a sum of two large doubles is halved before it is added,
// and eps is applied before the factor 100, so 1e308 is not "equal" to
// 2000 (a tolerance of scale*100*eps overflowed to +Inf above 1.8e306 and
// let every value through).
func floatsEqual(a, b float64) bool {
	if a == b {
		return true
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	diff := math.Abs(a - b) // may be +Inf for opposite extremes: then not equal
	half := math.Abs(a/2 + b/2)
	return diff <= eps*half*2*100
}

// eps is the difference between 1 and the next double (DBL_EPSILON).
const eps = 2.220446049250313e-16

// ValidateName reports whether name is usable as a parameter name. A name is
// one or more dot-separated tokens; a token is non-empty and made of ASCII
// letters, digits, '_', '-' and '/' (the slash appears in rclcpp's own
// qos_overrides./topic... names). Empty names, empty tokens ("a..b", ".a",
// "a.") and other characters (spaces, ':', '=', non-ASCII) are rejected.
func ValidateName(name string) error {
	if name == "" {
		return errors.New("parameter name is empty")
	}
	if len(name) > 255 {
		return fmt.Errorf("parameter name %.20q... is longer than 255 characters", name)
	}
	for i, tok := range strings.Split(name, ".") {
		if tok == "" {
			return fmt.Errorf("parameter name %q has an empty token at position %d", name, i)
		}
		for _, c := range tok {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
				c == '_' || c == '-' || c == '/') {
				return fmt.Errorf("parameter name %q contains the invalid character %q", name, c)
			}
		}
	}
	return nil
}
