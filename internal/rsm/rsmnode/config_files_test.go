package rsmnode

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/launch"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
)

// repoRoot is the repository root seen from this package.
const repoRoot = "../../.."

// TestParamsFile_OriginalDefaults checks params/rsm.yaml: node keys and the
// original's defaults, with the types the nodes declare.
func TestParamsFile_OriginalDefaults(t *testing.T) {
	var o param.Overrides
	if err := o.AddFile(filepath.Join(repoRoot, "params", "rsm.yaml")); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{
		"/rsmNode": {
			"update_frequency": 20.0, "calculate_goal_plugin": "rsm::CalculateGoalState",
			"navigation_plugin": "rsm::NavigationState", "mapping_plugin": "rsm::MappingDummyState",
			"pose_tolerance": 0.1, "idle_timer_duration": 10.0, "unstuck_timer_duration": 5.0,
			"idle_timer_behavior": false, "navigation_action": "navigate_to_pose",
			"reverse_navigation_action": "navigate_to_pose_reverse", "action_server_timeout": 20.0,
			"operation_mode_publisher": "robotControlMuxNode",
		},
		"/robotControlMuxNode": {
			"update_frequency": 20.0, "autonomy_cmd_vel_topic": "autonomy/cmd_vel",
			"teleoperation_cmd_vel_topic": "teleoperation/cmd_vel", "cmd_vel_topic": "cmd_vel",
			"joystick_used": false, "joystick_topic": "joy", "teleoperation_idle_timer": 0.5,
			"initial_operation_mode": int64(0), "max_linear_velocity": 1.0, "max_angular_velocity": 2.0,
			"autonomy_cmd_vel_timeout": 2.0, "enable_stamped_cmd_vel": false, "frame_id": "base_link",
		},
		"/serviceProviderNode": {
			"update_frequency": 20.0, "robot_frame": "/base_footprint", "waypoints_file": "$ROS_HOME/fsmnodes/waypoints.yaml",
			"max_waypoints": int64(1000), "max_routine_length": int64(256),
		},
		"/bootUpNode": {"wait_time": 1.0},
		"/cmd_vel_reverse": {
			"autonomy_cmd_vel_topic": "autonomy/cmd_vel", "max_linear_velocity": 1.0, "max_angular_velocity": 2.0,
			"enable_stamped_cmd_vel": false, "frame_id": "base_link", "cmd_vel_timeout": 0.5,
		},
	}
	for node, params := range want {
		got := o.For(node)
		if len(got) != len(params) {
			t.Errorf("%s: %d parameters, want %d: %v", node, len(got), len(params), got)
		}
		for name, v := range params {
			pv, ok := got[name]
			if !ok {
				t.Errorf("%s: %s missing", node, name)
				continue
			}
			if want, err := param.FromAny(v); err != nil || !reflect.DeepEqual(pv, want) {
				t.Errorf("%s: %s = %v, want %v (%v)", node, name, pv, want, err)
			}
		}
	}
}

// TestLaunchFile_NodesAndArguments loads launch/rsm.launch.xml.
func TestLaunchFile_NodesAndArguments(t *testing.T) {
	bin := t.TempDir()
	for _, e := range []string{"robot_control_mux", "state_interface", "service_provider", "rsm_boot", "cmd_vel_reverse"} {
		if err := os.WriteFile(filepath.Join(bin, e), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(repoRoot, "launch", "rsm.launch.xml")
	tests := []struct {
		name    string
		args    [][2]string
		nodes   []string
		stamped bool // the mux and the relay get enable_stamped_cmd_vel true
	}{
		{"defaults", nil, []string{"bootUpNode", "robotControlMuxNode", "rsmNode", "serviceProviderNode"}, false},
		{"no boot node", [][2]string{{"start_boot", "false"}}, []string{"robotControlMuxNode", "rsmNode", "serviceProviderNode"}, false},
		{"reverse relay", [][2]string{{"cmd_vel_reverse", "true"}, {"autonomy_cmd_vel_topic", "/robot/autonomy/cmd_vel"}},
			[]string{"bootUpNode", "cmd_vel_reverse", "robotControlMuxNode", "rsmNode", "serviceProviderNode"}, false},
		{"stamped", [][2]string{{"cmd_vel_reverse", "true"}, {"enable_stamped_cmd_vel", "true"}, {"autonomy_cmd_vel_topic", "/robot/autonomy/cmd_vel"}},
			[]string{"bootUpNode", "cmd_vel_reverse", "robotControlMuxNode", "rsmNode", "serviceProviderNode"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := launch.Load(file, launch.Options{BinDir: bin, Args: append(tt.args, [2]string{"robot_frame", "base_link"})})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range d.Processes {
				names = append(names, p.Name)
				if p.Package != "fsmnodes" {
					t.Errorf("%s: package %q", p.Name, p.Package)
				}
				inline := map[string]any{}
				for _, src := range p.Params {
					for _, v := range src.Inline {
						inline[v.Name] = v.Value
					}
				}
				if p.Name == "cmd_vel_reverse" && inline["autonomy_cmd_vel_topic"] != "/robot/autonomy/cmd_vel" {
					t.Errorf("cmd_vel_reverse: autonomy_cmd_vel_topic = %v, want the mux's", inline["autonomy_cmd_vel_topic"])
				}
				if (p.Name == "cmd_vel_reverse" || p.Name == MuxNodeName) && inline["enable_stamped_cmd_vel"] != tt.stamped {
					t.Errorf("%s: enable_stamped_cmd_vel = %#v, want %v", p.Name, inline["enable_stamped_cmd_vel"], tt.stamped)
				}
				if p.Name == "serviceProviderNode" && inline["robot_frame"] != "base_link" {
					t.Errorf("robot_frame = %v, want the launch argument", inline["robot_frame"])
				}
				if p.Name != "bootUpNode" && p.Name != "cmd_vel_reverse" {
					if f, ok := inline["update_frequency"].(float64); !ok || f != 20 {
						t.Errorf("%s: update_frequency = %#v, want 20.0 (double)", p.Name, inline["update_frequency"])
					}
				}
			}
			sort.Strings(names)
			if !reflect.DeepEqual(names, tt.nodes) {
				t.Errorf("nodes = %v, want %v", names, tt.nodes)
			}
		})
	}
}

func TestExpandPath(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	home := map[string]string{"HOME": "/home/u"}
	rosHome := map[string]string{"HOME": "/home/u", "ROS_HOME": "/data/ros"}
	tildeRosHome := map[string]string{"HOME": "/home/u", "ROS_HOME": "~/rh"}
	tests := []struct {
		in   string
		vars map[string]string
		want string
	}{
		{"", home, ""},
		{"/abs/w.yaml", home, "/abs/w.yaml"},
		{"rel/w.yaml", home, "rel/w.yaml"},
		{"~/w.yaml", home, "/home/u/w.yaml"},
		{"~", home, "/home/u"},
		{"~user/w.yaml", home, "~user/w.yaml"},
		{"$ROS_HOME/fsmnodes/waypoints.yaml", home, "/home/u/.ros/fsmnodes/waypoints.yaml"},
		{"${ROS_HOME}/fsmnodes/waypoints.yaml", home, "/home/u/.ros/fsmnodes/waypoints.yaml"},
		{"$ROS_HOME/fsmnodes/waypoints.yaml", rosHome, "/data/ros/fsmnodes/waypoints.yaml"},
		{"$ROS_HOME/w.yaml", tildeRosHome, "/home/u/rh/w.yaml"},
		{"$ROS_HOMEX/w.yaml", rosHome, "$ROS_HOMEX/w.yaml"},
	}
	for _, tt := range tests {
		got, err := ExpandPath(tt.in, env(tt.vars))
		if err != nil || got != tt.want {
			t.Errorf("ExpandPath(%q, %v) = %q, %v; want %q", tt.in, tt.vars, got, err, tt.want)
		}
	}
}

// Issue 13: the demo lost its waypoints on restart (waypoints_file ""). The
// demo and rsm.launch.xml keep them in $ROS_HOME/fsmnodes/waypoints.yaml, and
// (issue 27) each robot namespace in a file of its own:
// $ROS_HOME/fsmnodes/<namespace>/waypoints.yaml.
func TestLaunchFiles_WaypointsPersistedInROSHome(t *testing.T) {
	bin := t.TempDir()
	nodes, err := os.ReadDir(filepath.Join(repoRoot, "nodes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range nodes { // a stand-in for every executable
		if err := os.WriteFile(filepath.Join(bin, e.Name()), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{"rsm.launch.xml", "rsm_sim.launch.xml", "demo.launch.xml"} {
		dir := "fsmnodes/" // the root namespace
		if file == "demo.launch.xml" {
			dir = "fsmnodes/diffbot/"
		}
		for _, tt := range []struct {
			rosHome, want string
		}{
			{"", "/home/u/.ros/" + dir + "waypoints.yaml"},
			{"/var/lib/robot", "/var/lib/robot/" + dir + "waypoints.yaml"},
		} {
			vars := map[string]string{"HOME": "/home/u"}
			if tt.rosHome != "" {
				vars["ROS_HOME"] = tt.rosHome
			}
			lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
			d, err := launch.Load(filepath.Join(repoRoot, "launch", file), launch.Options{BinDir: bin, LookupEnv: lookup})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range d.Processes {
				if p.Name != ServiceProviderNodeName {
					continue
				}
				for _, src := range p.Params {
					for _, v := range src.Inline {
						if v.Name != "waypoints_file" {
							continue
						}
						found = true
						path, _ := v.Value.(string)
						got, err := ExpandPath(path, func(k string) string { return vars[k] })
						if err != nil || got != tt.want {
							t.Errorf("%s with ROS_HOME=%q: waypoints_file %q → %q, want %q", file, tt.rosHome, path, got, tt.want)
						}
					}
				}
			}
			if !found {
				t.Errorf("%s: serviceProviderNode has no waypoints_file", file)
			}
		}
	}
}

// TestLaunchFiles_WaypointRoutines: waypoint_routines is a launch argument
// of rsm.launch.xml (default none, as the original's rsm.launch), and the
// built-in simulation and the demo offer the Reversing routine, as the
// original's simulation launch files did.
func TestLaunchFiles_WaypointRoutines(t *testing.T) {
	bin := t.TempDir()
	nodes, err := os.ReadDir(filepath.Join(repoRoot, "nodes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range nodes { // a stand-in for every executable
		if err := os.WriteFile(filepath.Join(bin, e.Name()), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		file string
		args [][2]string
		want []string
	}{
		{"rsm.launch.xml", nil, []string{}},
		{"rsm.launch.xml", [][2]string{{"waypoint_routines", "['Reversing']"}}, []string{"Reversing"}},
		{"rsm.launch.xml", [][2]string{{"waypoint_routines", "[Reversing, Stairs]"}}, []string{"Reversing", "Stairs"}},
		{"rsm_sim.launch.xml", nil, []string{"Reversing"}},
		{"rsm_sim.launch.xml", [][2]string{{"waypoint_routines", "[]"}}, []string{}},
		{"demo.launch.xml", nil, []string{"Reversing"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.file, tt.args), func(t *testing.T) {
			d, err := launch.Load(filepath.Join(repoRoot, "launch", tt.file), launch.Options{BinDir: bin, Args: tt.args})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range d.Processes {
				if p.Name != ServiceProviderNodeName {
					continue
				}
				// The parameters file the launcher hands the node, read
				// as the node reads it.
				for i, src := range p.Params {
					if len(src.Inline) == 0 {
						continue
					}
					f := filepath.Join(t.TempDir(), fmt.Sprintf("params_%d.yaml", i))
					if err := os.WriteFile(f, []byte(p.ParamsYAML(src.Inline)), 0o600); err != nil {
						t.Fatal(err)
					}
					var o param.Overrides
					if err := o.AddFile(f); err != nil {
						t.Fatal(err)
					}
					pv, ok := o.For(p.FQN())["waypoint_routines"]
					if !ok {
						continue
					}
					found = true
					// An empty YAML list fits any array type; the node
					// declares a string array.
					if (pv.Type() != param.TypeStringArray && pv.Len() != 0) || !slices.Equal(pv.Strings(), tt.want) {
						t.Errorf("waypoint_routines = %v (%v), want %q", pv, pv.Type(), tt.want)
					}
				}
			}
			if !found {
				t.Error("serviceProviderNode has no waypoint_routines")
			}
		})
	}
}

// TestLaunchFiles_SimTime: rsm_sim.launch.xml use_sim_time:=true makes
// diff_drive_sim publish /clock and hands use_sim_time to every other node;
// by default nothing runs on sim time.
func TestLaunchFiles_SimTime(t *testing.T) {
	bin := t.TempDir()
	nodes, err := os.ReadDir(filepath.Join(repoRoot, "nodes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range nodes { // a stand-in for every executable
		if err := os.WriteFile(filepath.Join(bin, e.Name()), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, on := range []bool{false, true} {
		args := [][2]string{{"joystick", "true"}}
		if on {
			args = append(args, [2]string{"use_sim_time", "true"})
		}
		d, err := launch.Load(filepath.Join(repoRoot, "launch", "rsm_sim.launch.xml"), launch.Options{BinDir: bin, Args: args})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Processes) < 9 {
			t.Fatalf("%d processes", len(d.Processes))
		}
		for _, p := range d.Processes {
			want := "use_sim_time"
			if p.Name == "diff_drive_sim" {
				want = "publish_clock" // the simulator is the clock
			}
			// Every parameter file the node gets, in order, read as the
			// node reads them: its own entry in a file wins over the
			// launch file's inline (/**) values.
			var o param.Overrides
			for i, src := range p.Params {
				f := src.File
				if f == "" {
					f = filepath.Join(t.TempDir(), fmt.Sprintf("params_%d.yaml", i))
					if err := os.WriteFile(f, []byte(p.ParamsYAML(src.Inline)), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				if err := o.AddFile(f); err != nil {
					t.Fatal(err)
				}
			}
			got, set := o.For("/" + p.Name)[want]
			if (set && (got.Type() != param.TypeBool || got.Bool() != on)) || (!set && on) {
				t.Errorf("use_sim_time:=%v: %s gets %s = %v", on, p.Name, want, got)
			}
		}
	}
}

// TestLaunchFile_ArgumentsDocumented: the table "Launch arguments" of
// docs/rsm.md lists every argument of launch/rsm.launch.xml with its
// default, in the file's order, and nothing else.
func TestLaunchFile_ArgumentsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "launch", "rsm.launch.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Args []struct {
			Name    string `xml:"name,attr"`
			Default string `xml:"default,attr"`
		} `xml:"arg"`
	}
	if err := xml.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, a := range file.Args {
		want = append(want, fmt.Sprintf("%s=%s", a.Name, a.Default))
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "rsm.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Launch arguments\n")
	if !ok {
		t.Fatal(`docs/rsm.md has no "## Launch arguments"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `([^`]*)` \\|")
	var got []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		got = append(got, m[1]+"="+m[2])
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/rsm.md launch arguments:\n%s\nlaunch/rsm.launch.xml:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLaunchFile_RoutinePlugins: routine_plugins is a launch argument of
// rsm.launch.xml that reaches rsmNode as the string array the node
// declares, and its entries parse (default none).
func TestLaunchFile_RoutinePlugins(t *testing.T) {
	bin := t.TempDir()
	for _, e := range []string{"robot_control_mux", "state_interface", "service_provider", "rsm_boot", "cmd_vel_reverse"} {
		if err := os.WriteFile(filepath.Join(bin, e), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		arg  string // "" = the default
		want map[string]string
	}{
		{"", map[string]string{}},
		{"['Stairs=action:/my_robot/stairs']", map[string]string{"Stairs": "action:/my_robot/stairs"}},
		{"['Stairs=action:stairs', 'Dock=mypkg::DockState']", map[string]string{"Stairs": "action:stairs", "Dock": "mypkg::DockState"}},
	} {
		t.Run(tt.arg, func(t *testing.T) {
			var args [][2]string
			if tt.arg != "" {
				args = [][2]string{{"routine_plugins", tt.arg}}
			}
			d, err := launch.Load(filepath.Join(repoRoot, "launch", "rsm.launch.xml"), launch.Options{BinDir: bin, Args: args})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range d.Processes {
				if p.Name != StateInterfaceNodeName {
					continue
				}
				for i, src := range p.Params {
					if len(src.Inline) == 0 {
						continue
					}
					f := filepath.Join(t.TempDir(), fmt.Sprintf("params_%d.yaml", i))
					if err := os.WriteFile(f, []byte(p.ParamsYAML(src.Inline)), 0o600); err != nil {
						t.Fatal(err)
					}
					var o param.Overrides
					if err := o.AddFile(f); err != nil {
						t.Fatal(err)
					}
					pv, ok := o.For(p.FQN())["routine_plugins"]
					if !ok {
						continue
					}
					found = true
					if pv.Type() != param.TypeStringArray && pv.Len() != 0 {
						t.Errorf("routine_plugins = %v (%v), want a string array", pv, pv.Type())
					}
					got, err := ParseRoutinePlugins(pv.Strings())
					if err != nil || !reflect.DeepEqual(got, tt.want) {
						t.Errorf("routine_plugins %v → %v, %v; want %v", pv, got, err, tt.want)
					}
				}
			}
			if !found {
				t.Error("rsmNode has no routine_plugins")
			}
		})
	}
}
