package ros

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
)

// initParamServices creates the six parameter services every rclcpp node
// offers, under ~/ with the parameters QoS (reliable, volatile, keep last
// 1000). Their handlers run on the node's callback goroutine and follow
// rclcpp's parameter_service.cpp:
//
//   - get_parameters and describe_parameters answer an empty list when any
//     name is not declared;
//   - get_parameter_types answers NOT_SET (0) for undeclared names;
//   - set_parameters applies each parameter on its own (one result each);
//   - set_parameters_atomically applies all or none;
//   - list_parameters applies prefixes and depth (0 = recursive).
//
// A parameter value above the node's max_parameter_value_size is refused
// by both set services (see DefaultMaxParameterValueSize).
func (n *Node) initParamServices() error {
	store := n.ext.params.store
	limit, err := n.declareMaxValueSize()
	if err != nil {
		return err
	}
	q := WithQoS(QoSParameters)
	// The set services take requests up to the services' default limit,
	// or a little more than one value of the configured size.
	setOpts := []EndpointOption{q}
	if limit+1<<20 > DefaultMaxRequestSize {
		setOpts = append(setOpts, WithMaxSampleSize(limit+1<<20))
	}
	if _, err := NewService(n, "~/get_parameters", rcl_interfaces_srv.GetParameters,
		func(_ context.Context, req *rcl_interfaces_srv.GetParameters_Request) (*rcl_interfaces_srv.GetParameters_Response, error) {
			resp := &rcl_interfaces_srv.GetParameters_Response{Values: []rcl_interfaces_msg.ParameterValue{}}
			vals, err := store.GetAll(req.Names)
			if err != nil {
				n.Logger().Debugf("get_parameters: %v", err)
				return resp, nil
			}
			for _, v := range vals {
				resp.Values = append(resp.Values, paramValueToMsg(v))
			}
			return resp, nil
		}, q); err != nil {
		return err
	}
	if _, err := NewService(n, "~/get_parameter_types", rcl_interfaces_srv.GetParameterTypes,
		func(_ context.Context, req *rcl_interfaces_srv.GetParameterTypes_Request) (*rcl_interfaces_srv.GetParameterTypes_Response, error) {
			resp := &rcl_interfaces_srv.GetParameterTypes_Response{Types: []uint8{}}
			for _, t := range store.Types(req.Names) {
				resp.Types = append(resp.Types, uint8(t))
			}
			return resp, nil
		}, q); err != nil {
		return err
	}
	if _, err := NewService(n, "~/set_parameters", rcl_interfaces_srv.SetParameters,
		func(_ context.Context, req *rcl_interfaces_srv.SetParameters_Request) (*rcl_interfaces_srv.SetParameters_Response, error) {
			resp := &rcl_interfaces_srv.SetParameters_Response{Results: []rcl_interfaces_msg.SetParametersResult{}}
			for i := range req.Parameters {
				p, err := paramFromMsg(&req.Parameters[i], limit)
				if err == nil {
					err = store.SetAtomically([]param.Parameter{p})
				} else if errors.Is(err, errValueTooLarge) {
					n.Counter(CounterRequestsRejected).Inc()
				}
				resp.Results = append(resp.Results, setResultMsg(err))
			}
			return resp, nil
		}, setOpts...); err != nil {
		return err
	}
	if _, err := NewService(n, "~/set_parameters_atomically", rcl_interfaces_srv.SetParametersAtomically,
		func(_ context.Context, req *rcl_interfaces_srv.SetParametersAtomically_Request) (*rcl_interfaces_srv.SetParametersAtomically_Response, error) {
			ps := make([]param.Parameter, 0, len(req.Parameters))
			var err error
			for i := range req.Parameters {
				var p param.Parameter
				if p, err = paramFromMsg(&req.Parameters[i], limit); err != nil {
					if errors.Is(err, errValueTooLarge) {
						n.Counter(CounterRequestsRejected).Inc()
					}
					break
				}
				ps = append(ps, p)
			}
			if err == nil {
				err = store.SetAtomically(ps)
			}
			return &rcl_interfaces_srv.SetParametersAtomically_Response{Result: setResultMsg(err)}, nil
		}, setOpts...); err != nil {
		return err
	}
	if _, err := NewService(n, "~/list_parameters", rcl_interfaces_srv.ListParameters,
		func(_ context.Context, req *rcl_interfaces_srv.ListParameters_Request) (*rcl_interfaces_srv.ListParameters_Response, error) {
			res := store.List(req.Prefixes, req.Depth)
			return &rcl_interfaces_srv.ListParameters_Response{
				Result: rcl_interfaces_msg.ListParametersResult{Names: res.Names, Prefixes: res.Prefixes},
			}, nil
		}, q); err != nil {
		return err
	}
	if _, err := NewService(n, "~/describe_parameters", rcl_interfaces_srv.DescribeParameters,
		func(_ context.Context, req *rcl_interfaces_srv.DescribeParameters_Request) (*rcl_interfaces_srv.DescribeParameters_Response, error) {
			resp := &rcl_interfaces_srv.DescribeParameters_Response{Descriptors: []rcl_interfaces_msg.ParameterDescriptor{}}
			ds, err := store.Describe(req.Names)
			if err != nil {
				n.Logger().Debugf("describe_parameters: %v", err)
				return resp, nil
			}
			for _, d := range ds {
				resp.Descriptors = append(resp.Descriptors, descriptorToMsg(d))
			}
			return resp, nil
		}, q); err != nil {
		return err
	}
	return nil
}

// MaxParameterValueSizeParam is the read-only integer parameter every
// node declares: the largest value, in bytes, its set_parameters services
// take (a string's length, the sum of a string array's lengths plus 4 per
// element, 8 per element of an integer or double array, 1 of a byte or
// bool array). A larger value is refused with the reason and counted as
// requests_rejected, before it is checked, stored or republished on
// /parameter_events. Only the command line or a parameters file can set it
// (-p max_parameter_value_size:=N), before the node is created; it ranges
// from 1 byte to 2 GiB - 1. Values from the command line and parameter
// files are the operator's and are not bounded.
const MaxParameterValueSizeParam = "max_parameter_value_size"

// DefaultMaxParameterValueSize is max_parameter_value_size unless set:
// 1 MiB. The largest value the nodes take is a robot_description (the
// demo's URDFs are under 25 KiB).
const DefaultMaxParameterValueSize = 1 << 20

// declareMaxValueSize declares max_parameter_value_size and returns it.
func (n *Node) declareMaxValueSize() (int, error) {
	v, err := n.DeclareParameter(MaxParameterValueSizeParam, int64(DefaultMaxParameterValueSize), ParamDescriptor{
		Description:  "Largest parameter value, in bytes, the set_parameters services take; read-only, set at startup",
		ReadOnly:     true,
		IntegerRange: param.Ints(1, math.MaxInt32),
	})
	if err != nil {
		return 0, err
	}
	return int(v.Integer()), nil
}

// errValueTooLarge refuses a parameter value above max_parameter_value_size.
var errValueTooLarge = errors.New("value too large")

// paramValueSize is the size max_parameter_value_size bounds.
func paramValueSize(v *rcl_interfaces_msg.ParameterValue) int {
	n := len(v.StringValue) + len(v.ByteArrayValue) + len(v.BoolArrayValue) +
		8*len(v.IntegerArrayValue) + 8*len(v.DoubleArrayValue)
	for _, s := range v.StringArrayValue {
		n += 4 + len(s)
	}
	return n
}

// paramFromMsg converts a received Parameter, rejecting invalid names,
// unknown type numbers and values above limit bytes.
func paramFromMsg(m *rcl_interfaces_msg.Parameter, limit int) (param.Parameter, error) {
	if err := param.ValidateName(m.Name); err != nil {
		return param.Parameter{}, fmt.Errorf("%w: %w", param.ErrInvalidName, err)
	}
	if n := paramValueSize(&m.Value); n > limit {
		return param.Parameter{}, fmt.Errorf("set %q: %w: %w: %d bytes, the limit is %d (parameter %s)",
			m.Name, param.ErrInvalidValue, errValueTooLarge, n, limit, MaxParameterValueSizeParam)
	}
	v, err := paramValueFromMsg(&m.Value)
	if err != nil {
		return param.Parameter{}, fmt.Errorf("set %q: %w", m.Name, err)
	}
	return param.Parameter{Name: m.Name, Value: v}, nil
}

func setResultMsg(err error) rcl_interfaces_msg.SetParametersResult {
	r := param.ResultOf(err)
	return rcl_interfaces_msg.SetParametersResult{Successful: r.Successful, Reason: r.Reason}
}
