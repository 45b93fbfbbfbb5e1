package ros

import (
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
)

// paramValueToMsg converts a parameter value to its wire form. Only the
// field selected by Type is filled, as rclcpp does.
func paramValueToMsg(v param.Value) rcl_interfaces_msg.ParameterValue {
	m := rcl_interfaces_msg.ParameterValue{Type: uint8(v.Type())}
	switch v.Type() {
	case param.TypeBool:
		m.BoolValue = v.Bool()
	case param.TypeInteger:
		m.IntegerValue = v.Integer()
	case param.TypeDouble:
		m.DoubleValue = v.Double()
	case param.TypeString:
		m.StringValue = v.Str()
	case param.TypeByteArray:
		m.ByteArrayValue = v.Bytes()
	case param.TypeBoolArray:
		m.BoolArrayValue = v.Bools()
	case param.TypeIntegerArray:
		m.IntegerArrayValue = v.Integers()
	case param.TypeDoubleArray:
		m.DoubleArrayValue = v.Doubles()
	case param.TypeStringArray:
		m.StringArrayValue = v.Strings()
	}
	return m
}

// paramValueFromMsg converts a received value; an unknown type number is
// an error (the set is then rejected with that reason).
func paramValueFromMsg(m *rcl_interfaces_msg.ParameterValue) (param.Value, error) {
	switch param.Type(m.Type) {
	case param.TypeNotSet:
		return param.Value{}, nil
	case param.TypeBool:
		return param.BoolValue(m.BoolValue), nil
	case param.TypeInteger:
		return param.IntegerValue(m.IntegerValue), nil
	case param.TypeDouble:
		return param.DoubleValue(m.DoubleValue), nil
	case param.TypeString:
		return param.StringValue(m.StringValue), nil
	case param.TypeByteArray:
		return param.ByteArrayValue(m.ByteArrayValue), nil
	case param.TypeBoolArray:
		return param.BoolArrayValue(m.BoolArrayValue), nil
	case param.TypeIntegerArray:
		return param.IntegerArrayValue(m.IntegerArrayValue), nil
	case param.TypeDoubleArray:
		return param.DoubleArrayValue(m.DoubleArrayValue), nil
	case param.TypeStringArray:
		return param.StringArrayValue(m.StringArrayValue), nil
	}
	return param.Value{}, fmt.Errorf("parameter type %d is not a ParameterType value", m.Type)
}

func paramsToMsg(ps []param.Parameter) []rcl_interfaces_msg.Parameter {
	out := make([]rcl_interfaces_msg.Parameter, len(ps))
	for i, p := range ps {
		out[i] = rcl_interfaces_msg.Parameter{Name: p.Name, Value: paramValueToMsg(p.Value)}
	}
	return out
}

// descriptorToMsg converts a descriptor to rcl_interfaces/msg/
// ParameterDescriptor.
func descriptorToMsg(d param.Descriptor) rcl_interfaces_msg.ParameterDescriptor {
	m := rcl_interfaces_msg.ParameterDescriptor{
		Name:                  d.Name,
		Type:                  uint8(d.Type),
		Description:           d.Description,
		AdditionalConstraints: d.AdditionalConstraints,
		ReadOnly:              d.ReadOnly,
		DynamicTyping:         d.DynamicTyping,
	}
	if r := d.FloatRange; r != nil {
		m.FloatingPointRange = []rcl_interfaces_msg.FloatingPointRange{{FromValue: r.From, ToValue: r.To, Step: r.Step}}
	}
	if r := d.IntegerRange; r != nil {
		m.IntegerRange = []rcl_interfaces_msg.IntegerRange{{FromValue: r.From, ToValue: r.To, Step: r.Step}}
	}
	return m
}

// extStamp converts a time to builtin_interfaces/Time, clamping to the
// representable range (0 .. 2^31-1 s).
func extStamp(t time.Time) builtin_interfaces_msg.Time {
	if t.IsZero() {
		return builtin_interfaces_msg.Time{}
	}
	ns := t.UnixNano()
	if ns < 0 {
		return builtin_interfaces_msg.Time{}
	}
	sec := ns / 1e9
	if sec > math.MaxInt32 {
		return builtin_interfaces_msg.Time{Sec: math.MaxInt32, Nanosec: 999999999}
	}
	return builtin_interfaces_msg.Time{Sec: int32(sec), Nanosec: uint32(ns % 1e9)}
}

// extStampTime converts builtin_interfaces/Time to a time.Time (the zero
// message gives the Unix epoch, not time.Time{}). Nanosec values of a
// second or more are carried into the seconds.
func extStampTime(m builtin_interfaces_msg.Time) time.Time {
	return time.Unix(int64(m.Sec), int64(m.Nanosec))
}
