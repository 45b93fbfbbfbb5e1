package ros

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
)

// TestNodeError_NamesTheNodeOnce: whichever layers an error of a node
// passes through (the Declarer, a Node method, NewNode, Run), its message
// names the node once.
func TestNodeError_NamesTheNodeOnce(t *testing.T) {
	run := func(args []string, setup func(n *Node) error) error {
		return Run(context.Background(), append([]string{"--ros-args", "--disable-rosout-logs"}, args...), "err_node",
			func(_ context.Context, n *Node) error { return setup(n) })
	}
	declare := func(n *Node) error {
		d := NewDeclarer(n)
		param.Declare(d, "rate", 10.0, param.ReadOnly("Hz", "fixed"), nil)
		return d.Err()
	}
	other := &NodeError{Node: "/other", Err: errors.New("gone")}
	cases := []struct {
		name  string
		args  []string
		setup func(n *Node) error
		want  string
	}{
		{"declarer", []string{"-p", "rate:=fast"}, declare,
			`node /err_node: declare "rate": wrong parameter type: -p rate gives fast of type string but the parameter is of type double`},
		{"declarer in a namespace", []string{"-p", "rate:=fast", "-r", "__ns:=/a/b"}, declare,
			`node /a/b/err_node: declare "rate": wrong parameter type: -p rate gives fast of type string but the parameter is of type double`},
		{"node method", nil, func(n *Node) error { _, err := n.Parameter("nothing"); return err },
			`node /err_node: get "nothing": parameter not declared`},
		{"wrapped by setup", nil, func(n *Node) error {
			_, err := n.Parameter("nothing")
			return fmt.Errorf("reading the limits: %w", err)
		}, `reading the limits: node /err_node: get "nothing": parameter not declared`},
		{"created by NewNode", []string{"-p", "use_sim_time:=5"}, func(*Node) error { return nil },
			`node /err_node: declare "use_sim_time": wrong parameter type: -p use_sim_time gives 5 of type integer but the parameter is of type bool`},
		{"plain setup error", nil, func(*Node) error { return errors.New("no port") }, `node /err_node: no port`},
		{"another node's error", nil, func(*Node) error { return other }, `node /err_node: node /other: gone`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := run(c.args, c.setup)
			if err == nil || err.Error() != c.want {
				t.Fatalf("Run = %v\nwant %s", err, c.want)
			}
			var ne *NodeError
			if !errors.As(err, &ne) || !strings.HasSuffix(ne.Node, "/err_node") {
				t.Errorf("Run = %#v, want a NodeError of the node", err)
			}
		})
	}
}
