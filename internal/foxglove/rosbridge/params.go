package rosbridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/fsmnodes/fsmnodes/internal/foxglove"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
)

// paramClient holds the parameter service clients of one node.
type paramClient struct {
	list *ros.Client[rcl_interfaces_srv.ListParameters_Request, rcl_interfaces_srv.ListParameters_Response]
	get  *ros.Client[rcl_interfaces_srv.GetParameters_Request, rcl_interfaces_srv.GetParameters_Response]
	set  *ros.Client[rcl_interfaces_srv.SetParameters_Request, rcl_interfaces_srv.SetParameters_Response]
}

func (p *paramClient) close() {
	p.list.Close()
	p.get.Close()
	p.set.Close()
}

func newParamClient(n *ros.Node, node string) (_ *paramClient, err error) {
	opt := ros.WithQoS(ros.QoSParameters)
	p := &paramClient{}
	defer func() {
		if err != nil {
			for _, c := range []interface{ Close() error }{p.list, p.get, p.set} {
				if c != nil {
					c.Close()
				}
			}
		}
	}()
	if p.list, err = ros.NewClient(n, node+"/list_parameters", rcl_interfaces_srv.ListParameters, opt); err != nil {
		return nil, err
	}
	if p.get, err = ros.NewClient(n, node+"/get_parameters", rcl_interfaces_srv.GetParameters, opt); err != nil {
		return nil, err
	}
	if p.set, err = ros.NewClient(n, node+"/set_parameters", rcl_interfaces_srv.SetParameters, opt); err != nil {
		return nil, err
	}
	return p, nil
}

// paramClientFor returns the (cached) clients of a node.
func (b *Bridge) paramClientFor(node string) (*paramClient, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ros.ErrClosed
	}
	if p, ok := b.params[node]; ok {
		return p, nil
	}
	p, err := newParamClient(b.node, node)
	if err != nil {
		return nil, err
	}
	b.params[node] = p
	return p, nil
}

// pruneParamClientsLocked closes the clients of nodes that left the graph.
func (b *Bridge) pruneParamClientsLocked() {
	if len(b.params) == 0 {
		return
	}
	alive := map[string]bool{}
	for _, n := range b.rc.NodeNames() {
		alive[n.FullyQualifiedName()] = true
	}
	for name, p := range b.params {
		if !alive[name] {
			p.close()
			delete(b.params, name)
		}
	}
}

// paramNodes lists the nodes that offer list_parameters and
// get_parameters, except the bridge itself (as foxglove_bridge).
func (b *Bridge) paramNodes() []string {
	self := b.node.FullyQualifiedName()
	var out []string
	for _, n := range b.rc.NodeNames() {
		fqn := n.FullyQualifiedName()
		if fqn == self {
			continue
		}
		svcs, err := b.rc.ServiceNamesAndTypesByNode(n.Name, n.Namespace)
		if err != nil {
			continue
		}
		var list, get bool
		for _, s := range svcs {
			list = list || (s.Name == fqn+"/list_parameters" && slices.Contains(s.Types, "rcl_interfaces/srv/ListParameters"))
			get = get || (s.Name == fqn+"/get_parameters" && slices.Contains(s.Types, "rcl_interfaces/srv/GetParameters"))
		}
		if list && get {
			out = append(out, fqn)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func ready(ctx context.Context, c interface {
	ServiceIsReady() bool
	WaitForService(context.Context) error
}) error {
	if c.ServiceIsReady() {
		return nil
	}
	return c.WaitForService(ctx)
}

// nodeParams gets the named parameters of one node (all when names is
// empty); parameters that are not set are left out.
func (b *Bridge) nodeParams(ctx context.Context, node string, names []string) ([]foxglove.Parameter, error) {
	p, err := b.paramClientFor(node)
	if err != nil {
		return nil, err
	}
	if err := ready(ctx, p.get); err != nil {
		return nil, fmt.Errorf("parameter services of %s are not available: %w", node, err)
	}
	if len(names) == 0 {
		if err := ready(ctx, p.list); err != nil {
			return nil, fmt.Errorf("parameter services of %s are not available: %w", node, err)
		}
		resp, err := p.list.Call(ctx, &rcl_interfaces_srv.ListParameters_Request{Depth: rcl_interfaces_srv.ListParameters_Request_DEPTH_RECURSIVE})
		if err != nil {
			return nil, fmt.Errorf("listing the parameters of %s: %w", node, err)
		}
		names = resp.Result.Names
		if len(names) == 0 {
			return nil, nil
		}
	}
	resp, err := p.get.Call(ctx, &rcl_interfaces_srv.GetParameters_Request{Names: names})
	if err != nil {
		return nil, fmt.Errorf("getting %d parameter(s) of %s: %w", len(names), node, err)
	}
	values := resp.Values
	if len(values) != len(names) {
		// rclcpp (and our nodes) answer nothing at all when one name is
		// not declared: ask for each name alone and leave out the unknown.
		if len(names) == 1 {
			return nil, nil
		}
		values = make([]rcl_interfaces_msg.ParameterValue, len(names))
		for i, name := range names {
			r, err := p.get.Call(ctx, &rcl_interfaces_srv.GetParameters_Request{Names: []string{name}})
			if err != nil {
				return nil, fmt.Errorf("getting parameter %s of %s: %w", name, node, err)
			}
			if len(r.Values) == 1 {
				values[i] = r.Values[0]
			}
		}
	}
	out := make([]foxglove.Parameter, 0, len(names))
	for i, v := range values {
		if v.Type == rcl_interfaces_msg.ParameterType_PARAMETER_NOT_SET {
			continue
		}
		val, err := fromROSValue(&v)
		if err != nil {
			b.node.Logger().Warnf("parameter %s.%s: %v", node, names[i], err)
			continue
		}
		out = append(out, foxglove.Parameter{Name: node + "." + names[i], Value: val})
	}
	return out, nil
}

// GetParameters implements foxglove.Backend. Nodes are asked in
// parallel; a node that fails or times out is reported in the error and
// the others' values are still returned.
func (b *Bridge) GetParameters(ctx context.Context, names []string) ([]foxglove.Parameter, error) {
	byNode := map[string][]string{}
	var errs []error
	if len(names) == 0 {
		for _, n := range b.paramNodes() {
			byNode[n] = nil
		}
	} else {
		self := b.node.FullyQualifiedName()
		for _, full := range names {
			node, param, err := splitParamName(full)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if node == self {
				continue
			}
			if !slices.Contains(byNode[node], param) {
				byNode[node] = append(byNode[node], param)
			}
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var out []foxglove.Parameter
	for node, ps := range byNode {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := b.nodeParams(ctx, node, ps)
			if err != nil && len(names) == 0 && (errors.Is(err, ros.ErrClosed) || !slices.Contains(b.paramNodes(), node)) {
				// Asked for everything, and the node left the graph while it
				// was asked (rsm_boot exits once the robot has booted):
				// there is nothing of it to report, and no error.
				err = nil
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			out = append(out, got...)
		}()
	}
	wg.Wait()
	sortParams(out)
	return out, errors.Join(errs...)
}

// SetParameters implements foxglove.Backend: one set_parameters call per
// node; every refused parameter is named with the node's reason.
func (b *Bridge) SetParameters(ctx context.Context, params []foxglove.Parameter) error {
	byNode := map[string][]rcl_interfaces_msg.Parameter{}
	var order []string
	var errs []error
	for _, p := range params {
		node, name, err := splitParamName(p.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, empty := p.Value.(foxglove.EmptyArray); empty {
			if p.Value, err = b.emptyArrayOfCurrentType(ctx, node, name); err != nil {
				errs = append(errs, fmt.Errorf("parameter %s: %w", p.Name, err))
				continue
			}
		}
		v, err := toROSValue(p.Value)
		if err != nil {
			errs = append(errs, fmt.Errorf("parameter %s: %w", p.Name, err))
			continue
		}
		if _, seen := byNode[node]; !seen {
			order = append(order, node)
		}
		byNode[node] = append(byNode[node], rcl_interfaces_msg.Parameter{Name: name, Value: v})
	}
	for _, node := range order {
		ps := byNode[node]
		if err := b.setNodeParams(ctx, node, ps); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (b *Bridge) setNodeParams(ctx context.Context, node string, ps []rcl_interfaces_msg.Parameter) error {
	if node == b.node.FullyQualifiedName() {
		return fmt.Errorf("%s: the bridge's own parameters cannot be set through the bridge", node)
	}
	p, err := b.paramClientFor(node)
	if err != nil {
		return err
	}
	if err := ready(ctx, p.set); err != nil {
		return fmt.Errorf("parameter services of %s are not available: %w", node, err)
	}
	resp, err := p.set.Call(ctx, &rcl_interfaces_srv.SetParameters_Request{Parameters: ps})
	if err != nil {
		return fmt.Errorf("setting parameters of %s: %w", node, err)
	}
	var errs []error
	for i, r := range resp.Results {
		if !r.Successful && i < len(ps) {
			errs = append(errs, fmt.Errorf("%s.%s: %s", node, ps[i].Name, r.Reason))
		}
	}
	return errors.Join(errs...)
}

// emptyArrayOfCurrentType turns an untyped [] into an empty array of the
// parameter's current type.
func (b *Bridge) emptyArrayOfCurrentType(ctx context.Context, node, name string) (any, error) {
	cur, err := b.nodeParams(ctx, node, []string{name})
	if err != nil {
		return nil, err
	}
	if len(cur) == 0 {
		return nil, errors.New("an empty array needs a type (the parameter is not set, so its type is unknown)")
	}
	switch cur[0].Value.(type) {
	case []bool:
		return []bool{}, nil
	case []int64:
		return []int64{}, nil
	case []float64:
		return []float64{}, nil
	case []string:
		return []string{}, nil
	case []byte:
		return []byte{}, nil
	}
	return nil, fmt.Errorf("the parameter holds %T, not an array", cur[0].Value)
}

// fromROSValue converts a ROS parameter value to the protocol's Go form.
func fromROSValue(v *rcl_interfaces_msg.ParameterValue) (any, error) {
	switch v.Type {
	case rcl_interfaces_msg.ParameterType_PARAMETER_NOT_SET:
		return nil, nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_BOOL:
		return v.BoolValue, nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER:
		return v.IntegerValue, nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE:
		return v.DoubleValue, nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_STRING:
		return v.StringValue, nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_BYTE_ARRAY:
		return nonNilSlice(v.ByteArrayValue), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_BOOL_ARRAY:
		return nonNilSlice(v.BoolArrayValue), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER_ARRAY:
		return nonNilSlice(v.IntegerArrayValue), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE_ARRAY:
		return nonNilSlice(v.DoubleArrayValue), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_STRING_ARRAY:
		return nonNilSlice(v.StringArrayValue), nil
	}
	return nil, fmt.Errorf("unknown parameter type %d", v.Type)
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// toROSValue converts the protocol's Go form to a ROS parameter value
// (nil: not set, which deletes the parameter if the node allows it).
func toROSValue(v any) (rcl_interfaces_msg.ParameterValue, error) {
	var out rcl_interfaces_msg.ParameterValue
	switch x := v.(type) {
	case nil:
		out.Type = rcl_interfaces_msg.ParameterType_PARAMETER_NOT_SET
	case bool:
		out.Type, out.BoolValue = rcl_interfaces_msg.ParameterType_PARAMETER_BOOL, x
	case int64:
		out.Type, out.IntegerValue = rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER, x
	case float64:
		out.Type, out.DoubleValue = rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE, x
	case string:
		out.Type, out.StringValue = rcl_interfaces_msg.ParameterType_PARAMETER_STRING, x
	case []byte:
		out.Type, out.ByteArrayValue = rcl_interfaces_msg.ParameterType_PARAMETER_BYTE_ARRAY, x
	case []bool:
		out.Type, out.BoolArrayValue = rcl_interfaces_msg.ParameterType_PARAMETER_BOOL_ARRAY, x
	case []int64:
		out.Type, out.IntegerArrayValue = rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER_ARRAY, x
	case []float64:
		out.Type, out.DoubleArrayValue = rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE_ARRAY, x
	case []string:
		out.Type, out.StringArrayValue = rcl_interfaces_msg.ParameterType_PARAMETER_STRING_ARRAY, x
	default:
		return out, fmt.Errorf("unsupported value type %T", v)
	}
	return out, nil
}

// startParamEvents forwards /parameter_events to the server, named
// "/node.param" (deleted parameters as unset values).
func (b *Bridge) startParamEvents() error {
	self := b.node.FullyQualifiedName()
	_, err := ros.NewSubscription(b.node, "/parameter_events", ros.QoSParameterEvents, func(ev *rcl_interfaces_msg.ParameterEvent) {
		if ev.Node == self {
			return
		}
		var ps []foxglove.Parameter
		for _, list := range [][]rcl_interfaces_msg.Parameter{ev.NewParameters, ev.ChangedParameters} {
			for i := range list {
				v, err := fromROSValue(&list[i].Value)
				if err != nil {
					continue
				}
				ps = append(ps, foxglove.Parameter{Name: ev.Node + "." + list[i].Name, Value: v})
			}
		}
		for _, p := range ev.DeletedParameters {
			ps = append(ps, foxglove.Parameter{Name: ev.Node + "." + p.Name})
		}
		if len(ps) > 0 {
			b.srv.UpdateParameters(ps)
		}
	})
	if err != nil {
		return fmt.Errorf("subscribing to /parameter_events: %w", err)
	}
	return nil
}
