package robotstatenode

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestParameters_LiveAndChecked: robot_state_publisher's parameters are
// live, as the original's; a set that does not parse or is out of range is
// refused with the reason and changes nothing.
func TestParameters_LiveAndChecked(t *testing.T) {
	urdf, err := os.ReadFile("../../../urdf/diffbot.urdf")
	if err != nil {
		t.Fatal(err)
	}
	domain := testenv.Domain(t)
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true,
		LogOutput: testenv.LogWriter{T: t, Prefix: "rsp: "},
		Args:      []string{"--ros-args", "-p", "robot_description:=" + string(urdf)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode(Name, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := Setup(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	before, _ := n.ParamString("robot_description")
	for _, c := range []struct {
		name   string
		value  any
		reason string
	}{
		{"robot_description", "", "must not be empty"},
		{"robot_description", "<robot", "XML"},
		{"publish_frequency", 0.0, "publish_frequency"},
		{"publish_frequency", "fast", "type"},
		{"ignore_timestamp", 1.0, "type"},
	} {
		err := n.SetParameter(c.name, c.value)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.reason)) {
			t.Errorf("set %s = %v: %v, want refused with %q", c.name, c.value, err, c.reason)
		}
	}
	if d, _ := n.ParamString("robot_description"); d != before || !strings.Contains(d, "<robot") {
		t.Error("a refused set changed robot_description")
	}
	if err := n.SetParameter("publish_frequency", 10.0); err != nil {
		t.Errorf("valid publish_frequency refused: %v", err)
	}
	if err := n.SetParameter("frame_prefix", "robot1/"); err != nil {
		t.Errorf("valid frame_prefix refused: %v", err)
	}
}
