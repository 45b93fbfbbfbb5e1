package msgs_test

import (
	"testing"

	"github.com/fsmnodes/fsmnodes/msgs"
)

// publishedHashes are Jazzy RIHS01 hashes as shown by `ros2 topic info -v`
// and in the type_hashes of installed Jazzy packages (collected from public
// projects that embed them). Our generator computes them from our own
// definitions; equality proves the definitions and the algorithm match.
var publishedHashes = map[string]string{
	"std_msgs/msg/String":                                         "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
	"geometry_msgs/msg/Twist":                                     "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a",
	"sensor_msgs/msg/JointState":                                  "RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e",
	"nav_msgs/msg/Odometry":                                       "RIHS01_3cc97dc7fb7502f8714462c526d369e35b603cfc34d946e3f2eda2766dfec6e0",
	"sensor_msgs/msg/Imu":                                         "RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b",
	"std_msgs/msg/Float64MultiArray":                              "RIHS01_1025ddc6b9552d191f89ef1a8d2f60f3d373e28b283d8891ddcc974e8c55397f",
	"std_msgs/msg/MultiArrayLayout":                               "RIHS01_4c66e6f78e740ac103a94cf63259f968e48c617e7699e829b63c21a5cb50dac6",
	"std_msgs/msg/MultiArrayDimension":                            "RIHS01_5e773a60a4c7fc8a54985f307c7837aa2994252a126c301957a24e31282c9cbe",
	"diagnostic_msgs/msg/KeyValue":                                "RIHS01_d68081eaa540288c5440753baecef0c4e16e81a5f78ad68902ded5100413bb42",
	"rcl_interfaces/msg/Log":                                      "RIHS01_e28ce254ca8abc06abf92773b74602cdbf116ed34fbaf294fb9f81da9f318eac",
	"rcl_interfaces/msg/ParameterEvent":                           "RIHS01_043e627780fcad87a22d225bc2a037361dba713fca6a6b9f4b869a5aa0393204",
	"rmw_dds_common/msg/ParticipantEntitiesInfo":                  "RIHS01_91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e",
	"action_msgs/msg/GoalStatusArray":                             "RIHS01_6c1684b00f177d37438febe6e709fc4e2b0d4248dca4854946f9ed8b30cda83e",
	"std_msgs/msg/Empty":                                          "RIHS01_20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312",
	"std_srvs/srv/SetBool_Request":                                "RIHS01_c62fbb99d94e1b25e8ef9e109f9581956bb1b3361a45a4e5810c36a90d29932e",
	"std_srvs/srv/SetBool_Response":                               "RIHS01_d0814e7f7b4880ab77e9c57426c7aa1562ab69f11eef8e2e968812f9cbd0b059",
	"std_srvs/srv/Trigger_Request":                                "RIHS01_d010825374ce8918e72bfd826c82603e60f45419e932ea976f807b74a863a199",
	"std_srvs/srv/Trigger_Response":                               "RIHS01_2d946c21e2fc3f1e9ca6986a8191d85fcc70097a8bb7771a053564bc47009cdf",
	"geometry_msgs/msg/Accel":                                     "RIHS01_dc448243ded9b1fcbcca24aba0c22f013dae06c354ba2d849571c0a2a3f57ca0",
	"rosgraph_msgs/msg/Clock":                                     "RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564",
	"std_msgs/msg/Float32":                                        "RIHS01_7170d3d8f841f7be3172ce5f4f59f3a4d7f63b0447e8b33327601ad64d83d6e2",
	"std_msgs/msg/Header":                                         "RIHS01_f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01",
	"geometry_msgs/msg/Point":                                     "RIHS01_6963084842a9b04494d6b2941d11444708d892da2f4b09843b9c43f42a7f6881",
	"geometry_msgs/msg/Point32":                                   "RIHS01_2fc4db7cae16a4582c79a56b66173a8d48d52c7dc520ddc55a0d4bcf2a4bfdbc",
	"geometry_msgs/msg/Pose":                                      "RIHS01_d501954e9476cea2996984e812054b68026ae0bfae789d9a10b23daf35cc90fa",
	"geometry_msgs/msg/PoseStamped":                               "RIHS01_10f3786d7d40fd2b54367835614bff85d4ad3b5dab62bf8bca0cc232d73b4cd8",
	"geometry_msgs/msg/PoseWithCovariance":                        "RIHS01_9a7c0fd234b7f45c6098745ecccd773ca1085670e64107135397aee31c02e1bb",
	"geometry_msgs/msg/Quaternion":                                "RIHS01_8a765f66778c8ff7c8ab94afcc590a2ed5325a1d9a076ffff38fbce36f458684",
	"tf2_msgs/msg/TFMessage":                                      "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087",
	"builtin_interfaces/msg/Time":                                 "RIHS01_b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197",
	"geometry_msgs/msg/Transform":                                 "RIHS01_beb83fbe698636351461f6f35d1abb20010c43d55374d81bd041f1ba2581fddc",
	"geometry_msgs/msg/TransformStamped":                          "RIHS01_0a241f87d04668d94099cbb5ba11691d5ad32c2f29682e4eb5653424bd275206",
	"geometry_msgs/msg/TwistWithCovariance":                       "RIHS01_49f574f033f095d8b6cd1beaca5ca7925e296e84af1716d16c89d38b059c8c18",
	"geometry_msgs/msg/Vector3":                                   "RIHS01_cc12fe83e4c02719f1ce8070bfd14aecd40f75a96696a67a2a1f37f7dbb0765d",
	"service_msgs/msg/ServiceEventInfo":                           "RIHS01_41bcbbe07a75c9b52bc96bfd5c24d7f0fc0a08c0cb7921b3373c5732345a6f45",
	"type_description_interfaces/msg/FieldType":                   "RIHS01_a70b6dd919645a03a3586f7f821defbc886ea3e531a1d95cc0f380a3973ccaa6",
	"type_description_interfaces/msg/TypeDescription":             "RIHS01_739f2508c9fa3a6f330913ff5b9d25fb74159a077da71e1087f51a60c12a080b",
	"type_description_interfaces/srv/GetTypeDescription_Request":  "RIHS01_470f56ccbcf13d55c78c8b735fb12da03e639e5acded994426c89d94778d9e28",
	"type_description_interfaces/srv/GetTypeDescription_Response": "RIHS01_648c49d976240861a482f961c5621ddd0d2135d8cce6f297a76d4f6376d93b75",
	"nav_msgs/msg/OccupancyGrid":                                  "RIHS01_8d348150c12913a31ee0ec170fbf25089e4745d17035792a1ba94d6f0bc0cfc7",
	// lifecycle_msgs: share/lifecycle_msgs/*/*.json of the Jazzy build
	"lifecycle_msgs/msg/State":                            "RIHS01_dd2d02b82f3ebc858e53c431b1e6e91f3ffc71436fc81d0715214ac6ee2107a0",
	"lifecycle_msgs/msg/Transition":                       "RIHS01_c65d7b31ea134cba4f54fc867b817979be799f7452035cd35fac9b7421fb3424",
	"lifecycle_msgs/msg/TransitionDescription":            "RIHS01_c5f1cd4bb1ad2ba0e3329d4ac7015c52a674a72c1faf7974c37a33f4f6048b28",
	"lifecycle_msgs/msg/TransitionEvent":                  "RIHS01_d5f8873a2f0146498f812d7885c7327ce27e463d36811d8792f35ee38c0d6c38",
	"lifecycle_msgs/srv/ChangeState_Request":              "RIHS01_d74c6f524e14cade7b67e7297190360ed749264af300524fc1456f27cc2a553a",
	"lifecycle_msgs/srv/ChangeState_Response":             "RIHS01_e1ddfed0271fefe63767aa71561926e4d9eac0f1ddf9e71a8873eb46b36deac2",
	"lifecycle_msgs/srv/GetState_Response":                "RIHS01_fe249babab472e42cb5653b5d6a6b0c42a003b0fdfb84851aea3fde08760b4f5",
	"lifecycle_msgs/srv/GetAvailableStates_Response":      "RIHS01_223e0dd5bb8a847ebb9532adaf8b5e2a97e6e68e79faeaabd81a45fb32925bd1",
	"lifecycle_msgs/srv/GetAvailableTransitions_Response": "RIHS01_4711339461aadf02bcfff797a198de911f885074bd3f2fe9f7b677ef87f0741c",
}

func TestPublishedHashes(t *testing.T) {
	r := msgs.Registry()
	for name, want := range publishedHashes {
		ti, err := r.Message(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if ti.Hash != want {
			t.Errorf("%s: hash %s, want %s", name, ti.Hash, want)
		}
	}
	// Service type hashes (fields request_message, response_message,
	// event_message; the event type embeds service_msgs/ServiceEventInfo).
	for name, want := range map[string]string{
		"std_srvs/srv/SetBool":                               "RIHS01_abe9e4bb6b41b40e6789712c00ec8871923e089af3f667a79992a428cff2da0a",
		"rcl_interfaces/srv/GetParameters":                   "RIHS01_bf9803d5c74cf989a5de3e0c2e99444599a627c7ff75f97b8c05b01003675cbc",
		"rcl_interfaces/srv/SetParameters":                   "RIHS01_56eed9a67e169f9cb6c1f987bc88f868c14a8fc9f743a263bc734c154015d7e0",
		"rcl_interfaces/srv/SetParametersAtomically":         "RIHS01_0e192ef259c07fc3c07a13191d27002222e65e00ccec653ca05e856f79285fcd",
		"rcl_interfaces/srv/ListParameters":                  "RIHS01_3e6062bfbb27bfb8730d4cef2558221f51a11646d78e7bb30a1e83afac3aad9d",
		"rcl_interfaces/srv/DescribeParameters":              "RIHS01_845b484d71eb0673dae682f2e3ba3c4851a65a3dcfb97bddd82c5b57e91e4cff",
		"rcl_interfaces/srv/GetParameterTypes":               "RIHS01_da199c878688b3e530bdfe3ca8f74cb9fa0c303101e980a9e8f260e25e1c80ca",
		"type_description_interfaces/srv/GetTypeDescription": "RIHS01_69b9c19c1021405984cc60dbbb1edceb147a6538b411d812ba6afabeed962cd5",
		"lifecycle_msgs/srv/ChangeState":                     "RIHS01_356fe34f0475a43acf54542013af4167b0e729f77ea22ffb045c6ad8e20668e5",
		"lifecycle_msgs/srv/GetState":                        "RIHS01_800a0a5aae599782b02932de0caf563f6dc4e7e94b794eadde075ba2cbef9795",
		"lifecycle_msgs/srv/GetAvailableStates":              "RIHS01_00a07d79d2207d71e81a8cbc1880e5d924cc16d4688ea8e8e06e443dc8f8aa1d",
		"lifecycle_msgs/srv/GetAvailableTransitions":         "RIHS01_59b7ecefce0982a8a844b9f2c4f14764c1c4543cc55e72924e2aa4adad83e9bc",
	} {
		s, err := r.Service(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Hash != want {
			t.Errorf("%s service hash %s, want %s", name, s.Hash, want)
		}
	}
}

// TestRegistryComplete checks names, DDS names and hashes of every type.
func TestRegistryComplete(t *testing.T) {
	r := msgs.Registry()
	for _, want := range []string{
		"geometry_msgs/msg/PoseStamped", "sensor_msgs/msg/LaserScan", "nav_msgs/msg/OccupancyGrid",
		"tf2_msgs/msg/TFMessage", "rosgraph_msgs/msg/Clock", "std_srvs/srv/Empty",
		"rcl_interfaces/srv/DescribeParameters", "action_msgs/srv/CancelGoal",
		"nav2_msgs/action/NavigateToPose", "control_msgs/action/FollowJointTrajectory",
		"nav2_msgs/action/NavigateToPose_SendGoal_Request", "nav2_msgs/action/NavigateToPose_FeedbackMessage",
	} {
		found := false
		for _, n := range r.Names() {
			if n == want {
				found = true
			}
		}
		if !found {
			t.Errorf("registry lacks %s", want)
		}
	}
	for _, n := range r.Names() {
		ti, err := r.Message(n)
		if err != nil {
			continue // a service or action name
		}
		if len(ti.Hash) != len("RIHS01_")+64 {
			t.Errorf("%s: bad hash %q", n, ti.Hash)
		}
		if ti.New().ROSType() != ti {
			t.Errorf("%s: New().ROSType() is not the TypeInfo", n)
		}
	}
	a, err := r.Action("nav2_msgs/NavigateToPose")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := a.SendGoal.Request.DDSName, "nav2_msgs::action::dds_::NavigateToPose_SendGoal_Request_"; got != want {
		t.Errorf("DDS name %s, want %s", got, want)
	}
	if a.FeedbackMessage.Name != "nav2_msgs/action/NavigateToPose_FeedbackMessage" {
		t.Errorf("feedback message name %s", a.FeedbackMessage.Name)
	}
}
