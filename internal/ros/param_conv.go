package ros

import (
	"fmt"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
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
