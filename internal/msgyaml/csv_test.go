package msgyaml

import (
	"strings"
	"testing"

	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// CSV as Jazzy's rosidl_runtime_py.message_to_csv prints the same messages
// (the expected lines were printed by it): float32 sequences as Python
// floats, fixed float64 arrays, bytes reprs, truncation by characters,
// --no-arr and --no-str, and an empty leading field that vanishes.
func TestCSV(t *testing.T) {
	f32 := &std_msgs_msg.Float32MultiArray{Data: []float32{0.1, 1.0, 1e-5, 3e20}}
	pose := &geometry_msgs_msg.PoseWithCovariance{}
	pose.Covariance[0] = 0.1
	pose.Pose.Position.X = 1e16
	pose.Pose.Orientation.W = 1
	bytes := &std_msgs_msg.ByteMultiArray{Data: []byte{1, 'a', '\''}}
	for _, tc := range []struct {
		msg  any
		opts EchoOptions
		want string
	}{
		{f32, EchoOptions{}, "0,0.10000000149011612,1.0,9.999999747378752e-06,3.000000060122632e+20"},
		{f32, EchoOptions{TruncateLength: 2, NoStr: true}, "0,0.10000000149011612,1.0,..."},
		{f32, EchoOptions{NoArr: true}, "<sequence type: std_msgs/msg/MultiArrayDimension, length: 0>,0,<sequence type: float, length: 4>"},
		{pose, EchoOptions{}, "1e+16,0.0,0.0,0.0,0.0,0.0,1.0,0.1" + strings.Repeat(",0.0", 35)},
		{bytes, EchoOptions{}, `0,b'\x01',b'a',b"'"`},
		{&std_msgs_msg.String{Data: "héllo, wörld"}, EchoOptions{TruncateLength: 3}, "hél..."},
	} {
		got, err := CSV(tc.msg, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%T %+v:\n got %s\nwant %s", tc.msg, tc.opts, got, tc.want)
		}
	}
	if got := pyFloat32Str(float64(float32(0.1))); got != "0.1" {
		t.Errorf("pyFloat32Str(0.1f) = %s", got)
	}
}
