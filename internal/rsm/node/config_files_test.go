package node

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
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
			"reverse_navigation_action": "navigate_to_pose_reverse",
		},
		"/robotControlMuxNode": {
			"update_frequency": 20.0, "autonomy_cmd_vel_topic": "/autonomy/cmd_vel",
			"teleoperation_cmd_vel_topic": "/teleoperation/cmd_vel", "cmd_vel_topic": "/cmd_vel",
			"joystick_used": false, "joystick_topic": "joy", "teleoperation_idle_timer": 0.5,
			"initial_operation_mode": int64(0), "max_linear_velocity": 1.0, "max_angular_velocity": 2.0,
			"autonomy_cmd_vel_timeout": 1.0,
		},
		"/serviceProviderNode": {
			"update_frequency": 20.0, "robot_frame": "/base_footprint", "waypoints_file": "~/.ros/rsm/waypoints.yaml",
		},
		"/bootUpNode": {"wait_time": 1.0},
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
	for _, e := range []string{"robot_control_mux", "state_interface", "service_provider", "rsm_boot"} {
		if err := os.WriteFile(filepath.Join(bin, e), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(repoRoot, "launch", "rsm.launch.xml")
	tests := []struct {
		name  string
		args  [][2]string
		nodes []string
	}{
		{"defaults", nil, []string{"bootUpNode", "robotControlMuxNode", "rsmNode", "serviceProviderNode"}},
		{"no boot node", [][2]string{{"start_boot", "false"}}, []string{"robotControlMuxNode", "rsmNode", "serviceProviderNode"}},
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
				if p.Name == "serviceProviderNode" && inline["robot_frame"] != "base_link" {
					t.Errorf("robot_frame = %v, want the launch argument", inline["robot_frame"])
				}
				if p.Name != "bootUpNode" {
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
