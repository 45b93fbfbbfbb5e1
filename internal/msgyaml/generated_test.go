package msgyaml

import (
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/msgs"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// The same conversions on the generated bindings, one case per type kind.

func TestGenerated_DecodeAndEcho(t *testing.T) {
	reg := msgs.Registry()
	cases := []struct {
		typ, in, echo string
	}{
		{"std_msgs/msg/String", "{data: 'Hello World: 1'}", "data: 'Hello World: 1'\n---\n"},
		{"std_msgs/msg/Empty", "{}", "{}\n---\n"},
		{"geometry_msgs/msg/Twist", "{linear: {x: 0.5}, angular: {z: 0.1}}",
			"linear:\n  x: 0.5\n  y: 0.0\n  z: 0.0\nangular:\n  x: 0.0\n  y: 0.0\n  z: 0.1\n---\n"},
		{"geometry_msgs/msg/Quaternion", "{}", "x: 0.0\ny: 0.0\nz: 0.0\nw: 1.0\n---\n"}, // .msg default w=1
		{"sensor_msgs/msg/Joy", "{axes: [0.1, -1], buttons: [0, 1]}",
			"header:\n  stamp:\n    sec: 0\n    nanosec: 0\n  frame_id: ''\naxes:\n- 0.10000000149011612\n- -1.0\nbuttons:\n- 0\n- 1\n---\n"},
		{"std_msgs/msg/Float64MultiArray", "{layout: {dim: [{label: rows, size: 2, stride: 2}]}, data: [1, 2]}",
			"layout:\n  dim:\n  - label: rows\n    size: 2\n    stride: 2\n  data_offset: 0\ndata:\n- 1.0\n- 2.0\n---\n"},
	}
	for _, c := range cases {
		ti, err := reg.Message(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		m := ti.New()
		if err := Decode(c.in, m); err != nil {
			t.Errorf("%s: Decode(%q): %v", c.typ, c.in, err)
			continue
		}
		if got, err := Echo(m); err != nil || got != c.echo {
			t.Errorf("%s: Echo =\n%s\nwant\n%s", c.typ, got, c.echo)
		}
	}
}

func TestGenerated_Errors(t *testing.T) {
	var pwc geometry_msgs_msg.PoseWithCovariance
	err := Decode("{covariance: [1, 2, 3]}", &pwc)
	if err == nil || err.Error() != `field "covariance" of geometry_msgs/msg/PoseWithCovariance: fixed-size array needs exactly 36 elements, got 3` {
		t.Errorf("fixed array: %v", err)
	}
	var grid nav_msgs_msg.OccupancyGrid
	err = Decode("{data: [0, 100, -1, 128]}", &grid)
	if err == nil || err.Error() != `field "data[3]" of nav_msgs/msg/OccupancyGrid: value 128 is out of range for int8 [-128, 127]` {
		t.Errorf("int8 range: %v", err)
	}
	var js sensor_msgs_msg.JointState
	err = Decode("{header: {stamp: {sec: 1.5}}}", &js)
	if err == nil || err.Error() != `field "header.stamp.sec" of sensor_msgs/msg/JointState: expected an integer (int32), got float "1.5"` {
		t.Errorf("nested int: %v", err)
	}
	err = Decode("{header: {frame: map}}", &js)
	if err == nil || !strings.Contains(err.Error(), `unknown field "frame" in std_msgs/msg/Header (its fields are stamp, frame_id)`) {
		t.Errorf("unknown nested field: %v", err)
	}
}

func TestGenerated_EchoTruncatesLikeRos2(t *testing.T) {
	grid := nav_msgs_msg.OccupancyGrid{Data: make([]int8, 200)}
	got, err := MarshalWith(&grid, EchoOptions{NoArr: true})
	if err != nil || !strings.HasSuffix(got, "data: '<sequence type: int8, length: 200>'\n") {
		t.Errorf("no_arr grid:\n%s %v", got, err)
	}
	got, err = MarshalWith(&grid, EchoOptions{TruncateLength: 128})
	if err != nil || strings.Count(got, "\n- 0") != 128 || !strings.HasSuffix(got, "- 0\n- '...'\n") {
		t.Errorf("truncated grid has %d items:\n%s", strings.Count(got, "\n- 0"), got[len(got)-40:])
	}
	pwc := geometry_msgs_msg.PoseWithCovariance{}
	if got, _ := MarshalWith(&pwc, EchoOptions{NoArr: true}); !strings.HasSuffix(got, "covariance: '<array type: double[36]>'\n") {
		t.Errorf("no_arr fixed array:\n%s", got)
	}
}

func TestGenerated_Repr(t *testing.T) {
	req := std_srvs_srv.SetBool_Request{Data: true}
	if got := Repr(&req); got != "std_srvs.srv.SetBool_Request(data=True)" {
		t.Errorf("Repr = %s", got)
	}
	resp := std_srvs_srv.Trigger_Response{Success: true, Message: "it's done"}
	if got := Repr(&resp); got != `std_srvs.srv.Trigger_Response(success=True, message="it's done")` {
		t.Errorf("Repr = %s", got)
	}
	if got := Repr(&std_srvs_srv.Trigger_Request{}); got != "std_srvs.srv.Trigger_Request()" {
		t.Errorf("Repr = %s", got)
	}
	tw := geometry_msgs_msg.Twist{}
	if got := Repr(&tw); got != "geometry_msgs.msg.Twist(linear=geometry_msgs.msg.Vector3(x=0.0, y=0.0, z=0.0), angular=geometry_msgs.msg.Vector3(x=0.0, y=0.0, z=0.0))" {
		t.Errorf("Repr = %s", got)
	}
}
