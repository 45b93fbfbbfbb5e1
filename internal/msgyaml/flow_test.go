package msgyaml

import (
	"testing"

	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// --flow-style as PyYAML prints it with rosidl_runtime_py's representer:
// messages stay block mappings, sequences go flow, with what they hold,
// and strings inside them are quoted where a flow collection needs it.
// The expected texts are what Jazzy's rosidl_runtime_py and PyYAML print
// for the same messages.
func TestEchoFlowStyle(t *testing.T) {
	ev := std_srvs_srv.NewSetBool_Event()
	ev.Info.EventType = 2
	ev.Info.ClientGid[0], ev.Info.ClientGid[15] = 1, 200
	ev.Response = []std_srvs_srv.SetBool_Response{{Success: true, Message: "set true"}}
	arr := &std_msgs_msg.Float64MultiArray{Data: []float64{1, 0.5}}
	arr.Layout.Dim = []std_msgs_msg.MultiArrayDimension{{Label: "a, b", Size: 2, Stride: 2}}
	poses := &geometry_msgs_msg.PoseArray{}
	poses.Poses = make([]geometry_msgs_msg.Pose, 1)
	for _, tc := range []struct {
		msg  any
		opts EchoOptions
		want string
	}{
		{ev, EchoOptions{FlowStyle: true}, "info:\n  event_type: 2\n  stamp:\n    sec: 0\n    nanosec: 0\n" +
			"  client_gid: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 200]\n  sequence_number: 0\n" +
			"request: []\nresponse: [{success: true, message: set true}]\n---\n"},
		{arr, EchoOptions{FlowStyle: true}, "layout:\n  dim: [{label: 'a, b', size: 2, stride: 2}]\n  data_offset: 0\ndata: [1.0, 0.5]\n---\n"},
		{arr, EchoOptions{FlowStyle: true, TruncateLength: 1}, "layout:\n  dim: [{label: a..., size: 2, stride: 2}]\n  data_offset: 0\ndata: [1.0, '...']\n---\n"},
		{poses, EchoOptions{FlowStyle: true}, "header:\n  stamp:\n    sec: 0\n    nanosec: 0\n  frame_id: ''\n" +
			"poses: [{position: {x: 0.0, y: 0.0, z: 0.0}, orientation: {x: 0.0, y: 0.0, z: 0.0, w: 0.0}}]\n---\n"},
	} {
		got, err := EchoWith(tc.msg, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%T:\n%s\nwant\n%s", tc.msg, got, tc.want)
		}
	}
	for s, want := range map[string]string{"plain": "plain", "a:b": "'a:b'", ":a": "':a'", "x[1]": "'x[1]'", "what?": "'what?'", "true": "'true'", "": "''"} {
		if got := flowString(s, 2); got != want {
			t.Errorf("flowString(%q) = %s, want %s", s, got, want)
		}
	}
}
