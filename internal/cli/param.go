package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fsmnodes/fsmnodes/internal/msgyaml"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
)

func paramVerbs() map[string]verb {
	return map[string]verb{
		"param list": {
			usage: "param list [NODE] [-t|--param-type] [--param-prefixes P ...]",
			help:  "List the parameters of one node, or of every node.",
			run:   (*App).paramList,
		},
		"param get": {
			usage: "param get NODE NAME [--hide-type]",
			help:  "Print the value of a parameter ('Integer value is: 5').",
			run:   (*App).paramGet,
		},
		"param set": {
			usage: "param set NODE NAME VALUE",
			help: "Set a parameter; VALUE is read as YAML (1 integer, 1.0 double, true bool, [1, 2] array,\n" +
				"anything else a string). Prints 'Set parameter successful' or, on stderr with exit\n" +
				"status 1, 'Setting parameter failed: <reason>'.",
			run: (*App).paramSet,
		},
		"param describe": {
			usage: "param describe NODE NAME [NAME ...]",
			help:  "Print the descriptors of parameters (type, description, constraints).",
			run:   (*App).paramDescribe,
		},
		"param dump": {
			usage: "param dump NODE",
			help:  "Print every parameter of a node as a ROS 2 parameter file.",
			run:   (*App).paramDump,
		},
		"param load": paramLoadVerb(),
	}
}

// paramWait bounds the wait for a node's parameter services, as ros2 does.
const paramWait = 5 * time.Second

// absNode makes a node name absolute ("talker" -> "/talker").
func absNode(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/" + name
}

// paramSession opens a session and checks the node exists.
func (a *App) paramSession(ctx context.Context, nodeName string) (*session, string, error) {
	s, err := a.open(ctx, "param")
	if err != nil {
		return nil, "", err
	}
	fqn := absNode(nodeName)
	err = s.rc.WaitForGraph(withTimeout(ctx, 3*time.Second), func() bool {
		for _, n := range s.rc.NodeNames() {
			if n.FullyQualifiedName() == fqn {
				return true
			}
		}
		return false
	})
	if err != nil {
		s.close()
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "", fmt.Errorf("node not found: %s", fqn)
	}
	return s, fqn, nil
}

// withTimeout returns a context that ends after d; its cancel is left to
// the parent's end or the timer (short-lived CLI processes).
func withTimeout(ctx context.Context, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(ctx, d)
	go func() { <-c.Done(); cancel() }()
	return c
}

// callParam calls one parameter service of node fqn.
func callParam[Req, Resp any](ctx context.Context, s *session, fqn, service string, srv rosidl.Service[Req, Resp], req *Req) (*Resp, error) {
	cli, err := ros.NewClient(s.node, fqn+"/"+service, srv)
	if err != nil {
		return nil, fmt.Errorf("client for %s/%s: %w", fqn, service, err)
	}
	defer cli.Close()
	if err := cli.WaitForService(withTimeout(ctx, paramWait)); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("wait for service %s/%s timed out", fqn, service)
	}
	resp, err := cli.Call(withTimeout(ctx, paramWait), req)
	if err != nil {
		return nil, fmt.Errorf("exception while calling service of node '%s': %w", fqn, err)
	}
	return resp, nil
}

func listParams(ctx context.Context, s *session, fqn string, prefixes []string) ([]string, error) {
	resp, err := callParam(
		ctx, s, fqn, "list_parameters", rcl_interfaces_srv.ListParameters, &rcl_interfaces_srv.ListParameters_Request{Prefixes: prefixes})
	if err != nil {
		return nil, err
	}
	names := append([]string(nil), resp.Result.Names...)
	sort.Strings(names)
	return names, nil
}

func getParams(ctx context.Context, s *session, fqn string, names []string) ([]rcl_interfaces_msg.ParameterValue, error) {
	resp, err := callParam(
		ctx, s, fqn, "get_parameters", rcl_interfaces_srv.GetParameters, &rcl_interfaces_srv.GetParameters_Request{Names: names})
	if err != nil {
		return nil, err
	}
	return resp.Values, nil
}

var paramTypeNames = map[uint8]string{
	rcl_interfaces_msg.ParameterType_PARAMETER_NOT_SET:       "not set",
	rcl_interfaces_msg.ParameterType_PARAMETER_BOOL:          "boolean",
	rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER:       "integer",
	rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE:        "double",
	rcl_interfaces_msg.ParameterType_PARAMETER_STRING:        "string",
	rcl_interfaces_msg.ParameterType_PARAMETER_BYTE_ARRAY:    "byte array",
	rcl_interfaces_msg.ParameterType_PARAMETER_BOOL_ARRAY:    "boolean array",
	rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER_ARRAY: "integer array",
	rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE_ARRAY:  "double array",
	rcl_interfaces_msg.ParameterType_PARAMETER_STRING_ARRAY:  "string array",
}

func (a *App) paramList(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"-t": false, "--param-type": false, "--param-prefixes": true,
		"--include-hidden-nodes": false, "--no-daemon": false, spinTimeFlag: true})
	if err != nil {
		return err
	}
	if len(p.pos) > 1 {
		return usagef("usage: fsmnodes param list [NODE]")
	}
	var prefixes []string
	if v := p.get("", "--param-prefixes"); v != "" {
		prefixes = strings.Fields(v)
	}
	withTypes := p.has("-t", "--param-type")
	if len(p.pos) == 1 {
		s, fqn, err := a.paramSession(ctx, p.pos[0])
		if err != nil {
			return err
		}
		defer s.close()
		return a.printParamNames(ctx, s, fqn, prefixes, withTypes)
	}
	st, err := spinTime(p)
	if err != nil {
		return err
	}
	s, err := a.open(ctx, "param")
	if err != nil {
		return err
	}
	defer s.close()
	s.settle(ctx, st)
	services := map[string]bool{}
	for _, nt := range s.rc.ServiceNamesAndTypes() {
		services[nt.Name] = true
	}
	for _, n := range s.rc.NodeNames() {
		if strings.HasPrefix(n.Name, "_") && !p.has("--include-hidden-nodes") {
			continue
		}
		fqn := n.FullyQualifiedName()
		if !services[fqn+"/list_parameters"] {
			continue
		}
		fmt.Fprintf(a.Stdout, "%s:\n", fqn)
		if err := a.printParamNames(ctx, s, fqn, prefixes, withTypes); err != nil {
			return err
		}
	}
	return nil
}

func (a *App) printParamNames(ctx context.Context, s *session, fqn string, prefixes []string, withTypes bool) error {
	names, err := listParams(ctx, s, fqn, prefixes)
	if err != nil {
		return err
	}
	var types []uint8
	if withTypes && len(names) > 0 {
		resp, err := callParam(
			ctx, s, fqn, "get_parameter_types", rcl_interfaces_srv.GetParameterTypes, &rcl_interfaces_srv.GetParameterTypes_Request{Names: names})
		if err != nil {
			return err
		}
		types = resp.Types
	}
	for i, n := range names {
		if i < len(types) {
			fmt.Fprintf(a.Stdout, "  %s (type: %s)\n", n, paramTypeNames[types[i]])
		} else {
			fmt.Fprintf(a.Stdout, "  %s\n", n)
		}
	}
	return nil
}

// pyList renders a Go slice of strings already formatted as Python items.
func pyList(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// paramValueText returns ros2 param get's label and value text.
func paramValueText(v *rcl_interfaces_msg.ParameterValue) (label, value string, err error) {
	var items []string
	switch v.Type {
	case rcl_interfaces_msg.ParameterType_PARAMETER_BOOL:
		return "Boolean value is:", pyBool(v.BoolValue), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER:
		return "Integer value is:", strconv.FormatInt(v.IntegerValue, 10), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE:
		return "Double value is:", msgyaml.PyFloat(v.DoubleValue), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_STRING:
		return "String value is:", v.StringValue, nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_BYTE_ARRAY:
		for _, b := range v.ByteArrayValue {
			items = append(items, fmt.Sprintf("b'\\x%02x'", b))
		}
		return "Byte values are:", pyList(items), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_BOOL_ARRAY:
		for _, b := range v.BoolArrayValue {
			items = append(items, pyBool(b))
		}
		return "Boolean values are:", pyList(items), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER_ARRAY:
		for _, i := range v.IntegerArrayValue {
			items = append(items, strconv.FormatInt(i, 10))
		}
		return "Integer values are:", "array('q', " + pyList(items) + ")", nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE_ARRAY:
		for _, f := range v.DoubleArrayValue {
			items = append(items, msgyaml.PyFloat(f))
		}
		return "Double values are:", "array('d', " + pyList(items) + ")", nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_STRING_ARRAY:
		for _, s := range v.StringArrayValue {
			items = append(items, msgyaml.PyStr(s))
		}
		return "String values are:", pyList(items), nil
	case rcl_interfaces_msg.ParameterType_PARAMETER_NOT_SET:
		return "Parameter not set.", "", nil
	}
	return "", "", fmt.Errorf("unknown parameter type '%d'", v.Type)
}

func (a *App) paramGet(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"--hide-type": false, "--include-hidden-nodes": false, "--no-daemon": false})
	if err != nil {
		return err
	}
	if len(p.pos) != 2 {
		return usagef("usage: fsmnodes param get NODE NAME")
	}
	s, fqn, err := a.paramSession(ctx, p.pos[0])
	if err != nil {
		return err
	}
	defer s.close()
	vals, err := getParams(ctx, s, fqn, []string{p.pos[1]})
	if err != nil {
		return err
	}
	if len(vals) == 0 {
		return fmt.Errorf("parameter not set: %s", p.pos[1])
	}
	label, value, err := paramValueText(&vals[0])
	if err != nil {
		return err
	}
	switch {
	case p.has("--hide-type"):
		fmt.Fprintln(a.Stdout, value)
	case value == "" && vals[0].Type == rcl_interfaces_msg.ParameterType_PARAMETER_NOT_SET:
		fmt.Fprintln(a.Stdout, label)
	default:
		fmt.Fprintln(a.Stdout, label, value)
	}
	return nil
}

// ParameterValueFromString types a command-line value as ros2 param set
// does: YAML bool, integer, double, homogeneous arrays of those or of
// strings; anything else is a string.
func ParameterValueFromString(text string) rcl_interfaces_msg.ParameterValue {
	str := rcl_interfaces_msg.ParameterValue{Type: rcl_interfaces_msg.ParameterType_PARAMETER_STRING, StringValue: text}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil || len(n.Content) == 0 {
		return str
	}
	root := n.Content[0]
	scalar := func(x *yaml.Node) (any, bool) {
		if x.Kind != yaml.ScalarNode {
			return nil, false
		}
		switch x.ShortTag() {
		case "!!bool":
			var b bool
			return b, x.Decode(&b) == nil
		case "!!int":
			var i int64
			if x.Decode(&i) != nil {
				return nil, false
			}
			return i, true
		case "!!float":
			var f float64
			return f, x.Decode(&f) == nil
		case "!!str":
			return x.Value, true
		}
		return nil, false
	}
	if root.Kind == yaml.ScalarNode {
		v, ok := scalar(root)
		switch x := v.(type) {
		case bool:
			if ok {
				return rcl_interfaces_msg.ParameterValue{Type: rcl_interfaces_msg.ParameterType_PARAMETER_BOOL, BoolValue: x}
			}
		case int64:
			return rcl_interfaces_msg.ParameterValue{Type: rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER, IntegerValue: x}
		case float64:
			return rcl_interfaces_msg.ParameterValue{Type: rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE, DoubleValue: x}
		}
		return str
	}
	if root.Kind != yaml.SequenceNode {
		return str
	}
	var items []any
	for _, c := range root.Content {
		v, ok := scalar(c)
		if !ok {
			return str
		}
		items = append(items, v)
	}
	out := rcl_interfaces_msg.ParameterValue{}
	allOf := func(f func(any) bool) bool {
		for _, it := range items {
			if !f(it) {
				return false
			}
		}
		return true
	}
	switch {
	case allOf(func(x any) bool { _, ok := x.(bool); return ok }):
		out.Type = rcl_interfaces_msg.ParameterType_PARAMETER_BOOL_ARRAY
		out.BoolArrayValue = []bool{}
		for _, it := range items {
			out.BoolArrayValue = append(out.BoolArrayValue, it.(bool))
		}
	case allOf(func(x any) bool { _, ok := x.(int64); return ok }):
		out.Type = rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER_ARRAY
		out.IntegerArrayValue = []int64{}
		for _, it := range items {
			out.IntegerArrayValue = append(out.IntegerArrayValue, it.(int64))
		}
	case allOf(func(x any) bool { _, ok := x.(float64); return ok }):
		out.Type = rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE_ARRAY
		out.DoubleArrayValue = []float64{}
		for _, it := range items {
			out.DoubleArrayValue = append(out.DoubleArrayValue, it.(float64))
		}
	case allOf(func(x any) bool { _, ok := x.(string); return ok }):
		out.Type = rcl_interfaces_msg.ParameterType_PARAMETER_STRING_ARRAY
		out.StringArrayValue = []string{}
		for _, it := range items {
			out.StringArrayValue = append(out.StringArrayValue, it.(string))
		}
	default:
		return str
	}
	return out
}

// errSetFailed is returned after a rejected param set has been reported.
var errSetFailed = &reportedError{errors.New("setting parameter failed")}

func (a *App) paramSet(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"--include-hidden-nodes": false, "--no-daemon": false})
	if err != nil {
		return err
	}
	if len(p.pos) != 3 {
		return usagef("usage: fsmnodes param set NODE NAME VALUE")
	}
	s, fqn, err := a.paramSession(ctx, p.pos[0])
	if err != nil {
		return err
	}
	defer s.close()
	req := &rcl_interfaces_srv.SetParameters_Request{Parameters: []rcl_interfaces_msg.Parameter{
		{Name: p.pos[1], Value: ParameterValueFromString(p.pos[2])}}}
	resp, err := callParam(
		ctx, s, fqn, "set_parameters", rcl_interfaces_srv.SetParameters, req)
	if err != nil {
		return err
	}
	if len(resp.Results) != 1 {
		return fmt.Errorf("set_parameters of %s answered %d results for 1 parameter", fqn, len(resp.Results))
	}
	r := resp.Results[0]
	if r.Successful {
		msg := "Set parameter successful"
		if r.Reason != "" {
			msg += ": " + r.Reason
		}
		fmt.Fprintln(a.Stdout, msg)
		return nil
	}
	msg := "Setting parameter failed"
	if r.Reason != "" {
		msg += ": " + r.Reason
	}
	fmt.Fprintln(a.Stderr, msg)
	return errSetFailed
}

func (a *App) paramDescribe(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"--include-hidden-nodes": false, "--no-daemon": false})
	if err != nil {
		return err
	}
	if len(p.pos) < 2 {
		return usagef("usage: fsmnodes param describe NODE NAME [NAME ...]")
	}
	s, fqn, err := a.paramSession(ctx, p.pos[0])
	if err != nil {
		return err
	}
	defer s.close()
	resp, err := callParam(
		ctx, s, fqn, "describe_parameters", rcl_interfaces_srv.DescribeParameters, &rcl_interfaces_srv.DescribeParameters_Request{Names: p.pos[1:]})
	if err != nil {
		return err
	}
	if len(resp.Descriptors) == 0 {
		return fmt.Errorf("parameter not set: %s", strings.Join(p.pos[1:], ", "))
	}
	for _, d := range resp.Descriptors {
		fmt.Fprintln(a.Stdout, "Parameter name:", d.Name)
		fmt.Fprintln(a.Stdout, "  Type:", paramTypeNames[d.Type])
		if d.Description != "" {
			fmt.Fprintln(a.Stdout, "  Description:", d.Description)
		}
		if d.AdditionalConstraints != "" || d.ReadOnly || len(d.FloatingPointRange) > 0 || len(d.IntegerRange) > 0 {
			fmt.Fprintln(a.Stdout, "  Constraints:")
			if d.ReadOnly {
				fmt.Fprintln(a.Stdout, "    Read only: true")
			}
			if len(d.FloatingPointRange) > 0 {
				r := d.FloatingPointRange[0]
				fmt.Fprintln(a.Stdout, "    Min value:", msgyaml.PyFloat(r.FromValue))
				fmt.Fprintln(a.Stdout, "    Max value:", msgyaml.PyFloat(r.ToValue))
				if r.Step != 0 {
					fmt.Fprintln(a.Stdout, "    Step:", msgyaml.PyFloat(r.Step))
				}
			}
			if len(d.IntegerRange) > 0 {
				r := d.IntegerRange[0]
				fmt.Fprintln(a.Stdout, "    Min value:", r.FromValue)
				fmt.Fprintln(a.Stdout, "    Max value:", r.ToValue)
				if r.Step != 0 {
					fmt.Fprintln(a.Stdout, "    Step:", r.Step)
				}
			}
			if d.AdditionalConstraints != "" {
				fmt.Fprintln(a.Stdout, "    Additional constraints:", d.AdditionalConstraints)
			}
		}
	}
	return nil
}

// plainValue converts a ParameterValue to a value msgyaml.Dump renders.
func plainValue(v *rcl_interfaces_msg.ParameterValue) any {
	switch v.Type {
	case rcl_interfaces_msg.ParameterType_PARAMETER_BOOL:
		return v.BoolValue
	case rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER:
		return v.IntegerValue
	case rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE:
		return v.DoubleValue
	case rcl_interfaces_msg.ParameterType_PARAMETER_STRING:
		return v.StringValue
	case rcl_interfaces_msg.ParameterType_PARAMETER_BYTE_ARRAY:
		out := make([]int64, len(v.ByteArrayValue))
		for i, b := range v.ByteArrayValue {
			out[i] = int64(b)
		}
		return out
	case rcl_interfaces_msg.ParameterType_PARAMETER_BOOL_ARRAY:
		return v.BoolArrayValue
	case rcl_interfaces_msg.ParameterType_PARAMETER_INTEGER_ARRAY:
		return v.IntegerArrayValue
	case rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE_ARRAY:
		return v.DoubleArrayValue
	case rcl_interfaces_msg.ParameterType_PARAMETER_STRING_ARRAY:
		return v.StringArrayValue
	}
	return nil
}

func (a *App) paramDump(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"--include-hidden-nodes": false, "--no-daemon": false, "--print": false})
	if err != nil {
		return err
	}
	if len(p.pos) != 1 {
		return usagef("usage: fsmnodes param dump NODE")
	}
	s, fqn, err := a.paramSession(ctx, p.pos[0])
	if err != nil {
		return err
	}
	defer s.close()
	names, err := listParams(ctx, s, fqn, nil)
	if err != nil {
		return err
	}
	params := map[string]any{}
	if len(names) > 0 {
		vals, err := getParams(ctx, s, fqn, names)
		if err != nil {
			return err
		}
		if len(vals) != len(names) {
			return fmt.Errorf("get_parameters of %s answered %d values for %d names", fqn, len(vals), len(names))
		}
		for i, n := range names {
			// dotted names nest, as in a parameter file
			m := params
			parts := strings.Split(n, ".")
			for _, part := range parts[:len(parts)-1] {
				sub, ok := m[part].(map[string]any)
				if !ok {
					sub = map[string]any{}
					m[part] = sub
				}
				m = sub
			}
			m[parts[len(parts)-1]] = plainValue(&vals[i])
		}
	}
	fmt.Fprint(a.Stdout, msgyaml.Dump(map[string]any{fqn: map[string]any{"ros__parameters": params}}))
	return nil
}
