package rsmnode

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestParamsFile_LiveTagsMatchDescriptors: every entry of params/rsm.yaml
// (commented-out ones included) says [live] or [read-only], as the node's
// declared descriptor does.
func TestParamsFile_LiveTagsMatchDescriptors(t *testing.T) {
	b, err := os.ReadFile("../../../params/rsm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	domain := testenv.Domain(t)
	t.Parallel() // a domain of its own
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true,
		LogOutput: testenv.LogWriter{T: t, Prefix: "rsm: "}, Args: []string{"--ros-args", "-p", "waypoints_file:=''"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	setups := map[string]func(n *ros.Node) error{
		MuxNodeName:            func(n *ros.Node) error { return SetupMux(ctx, n) },
		StateInterfaceNodeName: func(n *ros.Node) error { return SetupStateInterface(ctx, n) },
		"serviceProviderNode":  func(n *ros.Node) error { return SetupServiceProvider(ctx, n) },
		CmdVelReverseNodeName:  func(n *ros.Node) error { return SetupCmdVelReverse(ctx, n) },
		BootNodeName:           func(n *ros.Node) error { return serveBoot(n, nil) },
	}
	nodes := map[string]*ros.Node{}
	for name, setup := range setups {
		n, err := rc.NewNode(name, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := setup(n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		nodes[name] = n
	}
	var node *ros.Node
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || (strings.HasPrefix(trimmed, "#") && !strings.Contains(trimmed, "[")) {
			continue
		}
		if !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "#") {
			name, _, _ := strings.Cut(line, ":")
			node = nodes[name]
			if node == nil {
				t.Fatalf("line %d: node %q has no set-up in this test", i+1, name)
			}
			continue
		}
		if node == nil {
			continue // the header
		}
		entry := strings.TrimPrefix(trimmed, "# ")
		key, rest, ok := strings.Cut(entry, ":")
		if !ok || key == "ros__parameters" || strings.ContainsAny(key, " \"") {
			continue
		}
		_, comment, _ := strings.Cut(rest, "#")
		desc, err := node.DescribeParameter(key)
		if err != nil {
			t.Errorf("line %d: %s: %v", i+1, key, err)
			continue
		}
		live, ro := strings.Contains(comment, "[live]"), strings.Contains(comment, "[read-only]")
		if live == ro || live == desc.ReadOnly {
			t.Errorf("line %d: %s is tagged live=%v read-only=%v but declared read-only=%v", i+1, key, live, ro, desc.ReadOnly)
		}
	}
}
