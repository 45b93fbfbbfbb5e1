// Package gazebo checks the Gazebo launch files and the ros_gz_bridge
// configuration: statically for both Gazebo generations (the files are
// well-formed, every bridged topic is one the built-in simulator uses with
// the same type, and every file and executable a launch file would start,
// as the launch library of a real ROS 2 evaluates it, exists), and against
// a real Gazebo Fortress when scripts/gazebo-peer.sh has built one
// (real_test.go).
package gazebo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fsmnodes/fsmnodes/internal/gazebo"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

const root = "../.."

type bridgeEntry struct {
	ROSTopic  string `yaml:"ros_topic_name"`
	GZTopic   string `yaml:"gz_topic_name"`
	ROSType   string `yaml:"ros_type_name"`
	GZType    string `yaml:"gz_type_name"`
	Direction string `yaml:"direction"`
}

func readBridge(t *testing.T, name string) []bridgeEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "params", name))
	if err != nil {
		t.Fatal(err)
	}
	var entries []bridgeEntry
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&entries); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(entries) == 0 {
		t.Fatalf("%s bridges nothing", name)
	}
	return entries
}

// The stamped configuration (rsm_gazebo.launch.py enable_stamped_cmd_vel:=true)
// is the plain one with /cmd_vel as TwistStamped, which ros_gz_bridge
// converts to gz.msgs.Twist.
func TestStampedBridgeDiffersOnlyInCmdVel(t *testing.T) {
	plain, stamped := readBridge(t, "gz_bridge.yaml"), readBridge(t, "gz_bridge_stamped.yaml")
	if len(plain) != len(stamped) {
		t.Fatalf("gz_bridge.yaml has %d entries, gz_bridge_stamped.yaml %d", len(plain), len(stamped))
	}
	for i, want := range plain {
		if want.ROSTopic == "/cmd_vel" {
			want.ROSType = "geometry_msgs/msg/TwistStamped"
		}
		if stamped[i] != want {
			t.Errorf("gz_bridge_stamped.yaml entry %d: %+v, want %+v", i, stamped[i], want)
		}
	}
}

func TestBridgeTopicsMatchBuiltInSimulator(t *testing.T) {
	entries := readBridge(t, "gz_bridge.yaml")
	topics := sim.SimTopics()
	seen := map[string]bool{}
	for _, e := range entries {
		want, ok := topics[e.ROSTopic]
		switch {
		case !ok:
			t.Errorf("bridged topic %s is not a topic of the built-in simulator", e.ROSTopic)
		case want != e.ROSType:
			t.Errorf("bridged topic %s has type %s, the built-in simulator uses %s", e.ROSTopic, e.ROSType, want)
		}
		if !strings.HasPrefix(e.GZType, "gz.msgs.") || e.GZTopic == "" {
			t.Errorf("%s: bad gz side %q %q", e.ROSTopic, e.GZTopic, e.GZType)
		}
		switch e.Direction {
		case "ROS_TO_GZ", "GZ_TO_ROS", "BIDIRECTIONAL":
		default:
			t.Errorf("%s: direction %q", e.ROSTopic, e.Direction)
		}
		if seen[e.ROSTopic] {
			t.Errorf("%s bridged twice", e.ROSTopic)
		}
		seen[e.ROSTopic] = true
	}
	// What RSM and the navigator need from a simulator must be bridged
	// (/clock is, once for all robots, by gazebo.launch.py: TestLaunchFiles).
	for _, need := range []string{"/cmd_vel", "/odom", "/scan", "/joint_states"} {
		if !seen[need] {
			t.Errorf("%s is not bridged", need)
		}
	}
	// odom -> base_footprint on /tf comes from odom_to_tf, out of the true
	// odometry on /odom; a bridged /tf would be DiffDrive's drifting one
	// beside it.
	if seen["/tf"] {
		t.Error("/tf is bridged: odom -> base_footprint would come from two sources")
	}
	src, err := os.ReadFile(filepath.Join(root, "launch", "rsm_gazebo.launch.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "executable='odom_to_tf'") {
		t.Error("rsm_gazebo.launch.py does not start odom_to_tf: nothing publishes odom -> base_footprint")
	}
	for _, g := range gazebo.Generations() {
		sdf := gazebo.FsmbotSDF(g)
		if !strings.Contains(sdf, "<odom_topic>odom</odom_topic><odom_frame>odom</odom_frame><robot_base_frame>base_footprint</robot_base_frame>") {
			t.Errorf("%s fsmbot: no OdometryPublisher of odom -> base_footprint on Gazebo's odom", g.Name)
		}
	}
}

var (
	fsmExec   = regexp.MustCompile(`package='fsmnodes',\s*executable='([a-z_]+)'`)
	shareFile = regexp.MustCompile(`os\.path\.join\(share,\s*'([a-z]+)',\s*'([A-Za-z0-9_.]+)'\)`)
	genFile   = regexp.MustCompile(`gz\.share_file\(share,\s*gen,\s*'([A-Za-z0-9_.]+)'\)`)
)

func TestGazeboLaunchFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root, "launch/*_gazebo.launch.py"))
	if len(files) == 0 {
		t.Fatal("no *_gazebo.launch.py files")
	}
	py, pyErr := exec.LookPath("python3")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "def generate_launch_description()") {
			t.Errorf("%s: no generate_launch_description()", f)
		}
		if pyErr == nil {
			out, err := exec.Command(py, "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", f).CombinedOutput()
			if err != nil {
				t.Errorf("%s is not valid Python: %s", f, out)
			}
		}
		for _, m := range fsmExec.FindAllStringSubmatch(string(src), -1) {
			if _, err := os.Stat(filepath.Join(root, "nodes", m[1])); err != nil {
				t.Errorf("%s starts fsmnodes executable %s, which does not exist", f, m[1])
			}
		}
		for _, m := range shareFile.FindAllStringSubmatch(string(src), -1) {
			if _, err := os.Stat(filepath.Join(root, m[1], m[2])); err != nil {
				t.Errorf("%s refers to share/fsmnodes/%s/%s, which does not exist", f, m[1], m[2])
			}
		}
		for _, m := range genFile.FindAllStringSubmatch(string(src), -1) {
			for _, g := range gazebo.Generations() {
				if _, err := os.Stat(filepath.Join(root, "worlds", g.Name, m[1])); err != nil {
					t.Errorf("%s refers to share/fsmnodes/worlds/%s/%s, which does not exist", f, g.Name, m[1])
				}
			}
		}
	}
}

// TestMain gives the real Gazebo tests loopback-only discovery and their
// own log folder.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
