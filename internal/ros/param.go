package ros

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
)

// ParamDescriptor describes a parameter when it is declared: type,
// description, constraints, read-only, dynamic typing and ranges. The zero
// value is valid (type from the default, writable, statically typed).
type ParamDescriptor = param.Descriptor

// Parameter is a named parameter value.
type Parameter = param.Parameter

// ParamValue is a parameter value of one of the nine ROS 2 parameter types.
type ParamValue = param.Value

// paramState is the parameter part of a node's extensions.
type paramState struct {
	store *param.Store

	mu        sync.Mutex
	nextID    int
	listeners []paramListener
}

type paramListener struct {
	id int
	fn func([]Parameter)
}

// DeclareParameter declares a parameter with a default value and a
// descriptor and returns its effective value: the default, overridden by a
// --params-file entry for this node, overridden by -p name:=value. def is a
// Go value of one of the parameter types (bool, int64 or int, float64,
// string, []byte, []bool, []int64 or []int, []float64, []string) or a
// ParamValue. Errors name the parameter and, for a bad override, where it
// came from; NaN and values outside the descriptor's range are rejected.
//
// Declaring runs the OnSetParameters validators and publishes the new
// parameter on /parameter_events.
func (n *Node) DeclareParameter(name string, def any, d ParamDescriptor) (ParamValue, error) {
	v, err := param.FromAny(def)
	if err != nil {
		return ParamValue{}, nodeError(n.fqn, fmt.Errorf("declare %q: %w", name, err))
	}
	got, err := n.ext.params.store.Declare(name, v, d)
	if err != nil {
		return ParamValue{}, nodeError(n.fqn, err)
	}
	return got, nil
}

// DeclareParam is DeclareParameter with a typed default and result:
//
//	rate, err := ros.DeclareParam(node, "rate", 10.0, ros.ParamDescriptor{Description: "Hz"})
func DeclareParam[T param.Kind](n *Node, name string, def T, d ParamDescriptor) (T, error) {
	var zero T
	if d.Type == param.TypeNotSet {
		d.Type = param.TypeOf[T]()
	}
	v, err := n.DeclareParameter(name, param.Of(def), d)
	if err != nil {
		return zero, err
	}
	out, err := param.As[T](v)
	if err != nil {
		return zero, nodeError(n.fqn, fmt.Errorf("parameter %q: %w", name, err))
	}
	return out, nil
}

// GetParam returns the current value of a declared parameter as a T.
func GetParam[T param.Kind](n *Node, name string) (T, error) {
	var zero T
	v, err := n.Parameter(name)
	if err != nil {
		return zero, err
	}
	out, err := param.As[T](v)
	if err != nil {
		return zero, nodeError(n.fqn, fmt.Errorf("parameter %q: %w", name, err))
	}
	return out, nil
}

// Parameter returns the current value of a declared parameter.
func (n *Node) Parameter(name string) (ParamValue, error) {
	v, err := n.ext.params.store.Get(name)
	if err != nil {
		return ParamValue{}, nodeError(n.fqn, err)
	}
	return v, nil
}

// ParamBool returns a declared bool parameter.
func (n *Node) ParamBool(name string) (bool, error) { return GetParam[bool](n, name) }

// ParamInt64 returns a declared integer parameter.
func (n *Node) ParamInt64(name string) (int64, error) { return GetParam[int64](n, name) }

// ParamFloat64 returns a declared double parameter.
func (n *Node) ParamFloat64(name string) (float64, error) { return GetParam[float64](n, name) }

// ParamString returns a declared string parameter.
func (n *Node) ParamString(name string) (string, error) { return GetParam[string](n, name) }

// ParamBytes returns a declared byte array parameter.
func (n *Node) ParamBytes(name string) ([]byte, error) { return GetParam[[]byte](n, name) }

// ParamBools returns a declared bool array parameter.
func (n *Node) ParamBools(name string) ([]bool, error) { return GetParam[[]bool](n, name) }

// ParamInt64s returns a declared integer array parameter.
func (n *Node) ParamInt64s(name string) ([]int64, error) { return GetParam[[]int64](n, name) }

// ParamFloat64s returns a declared double array parameter.
func (n *Node) ParamFloat64s(name string) ([]float64, error) { return GetParam[[]float64](n, name) }

// ParamStrings returns a declared string array parameter.
func (n *Node) ParamStrings(name string) ([]string, error) { return GetParam[[]string](n, name) }

// HasParameter reports whether name is declared.
func (n *Node) HasParameter(name string) bool { return n.ext.params.store.Has(name) }

// ParameterNames returns the declared parameter names, sorted.
func (n *Node) ParameterNames() []string { return n.ext.params.store.Names() }

// DescribeParameter returns the descriptor of a declared parameter.
func (n *Node) DescribeParameter(name string) (ParamDescriptor, error) {
	d, err := n.ext.params.store.Describe([]string{name})
	if err != nil {
		return ParamDescriptor{}, nodeError(n.fqn, err)
	}
	return d[0], nil
}

// SetParameter sets a declared parameter from Go code, with the same checks
// as a remote set (type, read-only, range, validators). value is converted
// as in DeclareParameter.
func (n *Node) SetParameter(name string, value any) error {
	v, err := param.FromAny(value)
	if err != nil {
		return nodeError(n.fqn, fmt.Errorf("set %q: %w", name, err))
	}
	return n.SetParametersAtomically([]Parameter{{Name: name, Value: v}})
}

// SetParametersAtomically sets all parameters or none.
func (n *Node) SetParametersAtomically(ps []Parameter) error {
	if err := n.ext.params.store.SetAtomically(ps); err != nil {
		return nodeError(n.fqn, err)
	}
	return nil
}

// UndeclareParameter removes a dynamically typed, writable parameter.
func (n *Node) UndeclareParameter(name string) error {
	if err := n.ext.params.store.Undeclare(name); err != nil {
		return nodeError(n.fqn, err)
	}
	return nil
}

// OnSetParameters adds a validator consulted before every change of this
// node's parameters, local or remote (rclcpp's
// add_on_set_parameters_callback). It gets the proposed parameters and
// returns nil to accept or an error whose text is sent back as the
// SetParametersResult reason. It runs on the goroutine making the change
// (the node's callback goroutine for remote sets), may read parameters and
// must not set them. It returns a function that removes the validator.
func (n *Node) OnSetParameters(validate func(proposed []Parameter) error) (remove func()) {
	return n.ext.params.store.OnSet(validate)
}

// OnParametersChanged registers f to be called, on the node's callback
// goroutine, with the parameters of every accepted change (new values;
// deleted parameters have the zero ParamValue). Declarations are not
// reported. f may set parameters. It returns a function that removes f.
func (n *Node) OnParametersChanged(f func(changed []Parameter)) (remove func()) {
	ps := &n.ext.params
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.nextID++
	id := ps.nextID
	ps.listeners = append(ps.listeners, paramListener{id: id, fn: f})
	return func() {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		ps.listeners = slices.DeleteFunc(ps.listeners, func(l paramListener) bool { return l.id == id })
	}
}

// notifyChanged posts the listeners for one accepted change.
func (n *Node) notifyChanged(ev param.Event) {
	changed := append(slices.Clone(ev.Changed), ev.Deleted...)
	if len(changed) == 0 {
		return
	}
	ps := &n.ext.params
	ps.mu.Lock()
	ls := slices.Clone(ps.listeners)
	ps.mu.Unlock()
	for _, l := range ls {
		f := l.fn
		_ = n.Post(func() { f(slices.Clone(changed)) }) // ErrClosed: nobody left to tell
	}
}

// Params returns the node's parameter store, for code that needs the
// lower-level API of package param.
func (n *Node) Params() *param.Store { return n.ext.params.store }

// DeclareDuration declares a double parameter that holds seconds (the ROS
// convention for durations, e.g. teleoperation_idle_timer: 0.5) and returns
// it as a time.Duration. Unless d sets its own FloatRange, negative values
// are rejected; a value too large for a Duration is an error.
//
//	timeout, err := ros.DeclareDuration(node, "teleoperation_idle_timer", 500*time.Millisecond, ros.ParamDescriptor{})
func DeclareDuration(n *Node, name string, def time.Duration, d ParamDescriptor) (time.Duration, error) {
	if d.FloatRange == nil && d.IntegerRange == nil {
		d.FloatRange = &param.FloatRange{From: 0, To: math.Inf(1)}
	}
	sec, err := DeclareParam(n, name, def.Seconds(), d)
	if err != nil {
		return 0, err
	}
	return secondsToDuration(n, name, sec)
}

// ParamDuration returns a double parameter holding seconds as a Duration.
func (n *Node) ParamDuration(name string) (time.Duration, error) {
	sec, err := n.ParamFloat64(name)
	if err != nil {
		return 0, err
	}
	return secondsToDuration(n, name, sec)
}

func secondsToDuration(n *Node, name string, sec float64) (time.Duration, error) {
	if math.IsNaN(sec) || math.Abs(sec) > float64(math.MaxInt64)/1e9 {
		return 0, nodeError(n.fqn, fmt.Errorf("parameter %q: %g s does not fit a duration", name, sec))
	}
	return time.Duration(math.Round(sec * 1e9)), nil
}

// NewDeclarer returns the Declarer of n's parameters, the one way the nodes
// of this project declare them: read-only ones with param.Declare and
// param.ReadOnly, ones that may change while the node runs with
// param.DeclareLive (see package param). Its errors name the node (a
// NodeError).
func NewDeclarer(n *Node) *param.Declarer {
	return param.NewDeclarer(n.ext.params.store, func(err error) error { return nodeError(n.fqn, err) })
}
