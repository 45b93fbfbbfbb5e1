package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
)

func paramLoadVerb() verb {
	return verb{
		usage: "param load NODE FILE [--no-use-wildcard]",
		help: "Set the parameters a ROS 2 parameter file gives for NODE (its fully qualified name, its\n" +
			"plain name, and /** unless --no-use-wildcard), one set_parameters call each, printing\n" +
			"'Set parameter NAME successful' or '... failed: reason'.",
		run: (*App).paramLoad,
	}
}

// paramsForNode extracts the parameters a parameter file gives node fqn.
// Entries for /** come first so that node-specific ones override them.
func paramsForNode(data []byte, fqn string, wildcard bool) ([]rcl_interfaces_msg.Parameter, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("a parameter file is a mapping of node names")
	}
	name, _ := splitNodeName(fqn)
	keys := []string{fqn, strings.TrimPrefix(fqn, "/"), name}
	byName := map[string]rcl_interfaces_msg.Parameter{}
	var order []string
	apply := func(n *yaml.Node, key string) error {
		var rp *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "ros__parameters" {
				rp = n.Content[i+1]
			}
		}
		if rp == nil {
			return fmt.Errorf("node key %q has no ros__parameters", key)
		}
		return flattenParams(rp, "", func(p rcl_interfaces_msg.Parameter) {
			if _, ok := byName[p.Name]; !ok {
				order = append(order, p.Name)
			}
			byName[p.Name] = p
		})
	}
	pass := func(match func(string) bool) error {
		for i := 0; i+1 < len(root.Content); i += 2 {
			k := root.Content[i].Value
			if match(k) {
				if err := apply(root.Content[i+1], k); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if wildcard {
		if err := pass(func(k string) bool { return k == "/**" }); err != nil {
			return nil, err
		}
	}
	err := pass(func(k string) bool {
		for _, want := range keys {
			if k == want {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	out := make([]rcl_interfaces_msg.Parameter, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out, nil
}

// flattenParams turns nested maps into dotted parameter names.
func flattenParams(n *yaml.Node, prefix string, emit func(rcl_interfaces_msg.Parameter)) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("parameters under %q must be a mapping", prefix)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		if prefix != "" {
			name = prefix + "." + name
		}
		v := n.Content[i+1]
		if v.Kind == yaml.MappingNode {
			if err := flattenParams(v, name, emit); err != nil {
				return err
			}
			continue
		}
		text, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("parameter %s: %w", name, err)
		}
		pv := ParameterValueFromString(strings.TrimSpace(string(text)))
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" {
			pv = rcl_interfaces_msg.ParameterValue{Type: rcl_interfaces_msg.ParameterType_PARAMETER_STRING, StringValue: v.Value}
		}
		emit(rcl_interfaces_msg.Parameter{Name: name, Value: pv})
	}
	return nil
}

func (a *App) paramLoad(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"--no-use-wildcard": false, "--include-hidden-nodes": false, "--no-daemon": false})
	if err != nil {
		return err
	}
	if len(p.pos) != 2 {
		return usagef("usage: fsmnodes param load NODE FILE")
	}
	data, err := os.ReadFile(p.pos[1])
	if err != nil {
		return fmt.Errorf("parameter file: %w", err)
	}
	fqn := absNode(p.pos[0])
	params, err := paramsForNode(data, fqn, !p.has("--no-use-wildcard"))
	if err != nil {
		return fmt.Errorf("%s: %w", p.pos[1], err)
	}
	if len(params) == 0 {
		return fmt.Errorf("%s holds no parameters for %s", p.pos[1], fqn)
	}
	s, fqn, err := a.paramSession(ctx, p.pos[0])
	if err != nil {
		return err
	}
	defer s.close()
	resp, err := callParam(
		ctx, s, fqn, "set_parameters", rcl_interfaces_srv.SetParameters, &rcl_interfaces_srv.SetParameters_Request{Parameters: params})
	if err != nil {
		return err
	}
	if len(resp.Results) != len(params) {
		return fmt.Errorf("set_parameters of %s answered %d results for %d parameters", fqn, len(resp.Results), len(params))
	}
	failed := 0
	for i, r := range resp.Results {
		if r.Successful {
			fmt.Fprintf(a.Stdout, "Set parameter %s successful\n", params[i].Name)
			continue
		}
		failed++
		msg := fmt.Sprintf("Set parameter %s failed", params[i].Name)
		if r.Reason != "" {
			msg += ": " + r.Reason
		}
		fmt.Fprintln(a.Stdout, msg)
	}
	if failed > 0 {
		return &reportedError{fmt.Errorf("%d of %d parameters not set", failed, len(params))}
	}
	return nil
}
