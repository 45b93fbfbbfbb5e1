package gazebo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/gazebo"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// launched is one process a launch file would start, as
// testdata/describe_launch.py prints it.
type launched struct {
	Kind       string   `json:"kind"`
	Cmd        []string `json:"cmd"`
	Package    string   `json:"package"`
	Executable string   `json:"executable"`
	Name       string   `json:"name"`
	Namespace  string   `json:"namespace"`
	Arguments  []string `json:"arguments"`
	Parameters []any    `json:"parameters"`
}

// param returns the value of a parameter given in a dict, or nil.
func (l launched) param(name string) any {
	for _, p := range l.Parameters {
		if m, ok := p.(map[string]any); ok {
			if v, ok := m[name]; ok {
				return v
			}
		}
	}
	return nil
}

// distros returns the real ROS 2 installations to evaluate launch files
// with: every peer scripts/ros2-peer.sh built, else the one testenv finds.
func distros(t *testing.T) []*testenv.ROS2 {
	var rs []*testenv.ROS2
	for _, d := range []string{"humble", "jazzy"} {
		if s := "/opt/ros2-" + d + "/env.sh"; fileExists(s) {
			rs = append(rs, &testenv.ROS2{Setup: s, Distro: d})
		}
	}
	if len(rs) == 0 {
		rs = append(rs, testenv.NeedROS2(t))
	}
	return rs
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// shareDir makes an ament prefix whose share/fsmnodes is this repository,
// so that get_package_share_directory('fsmnodes') finds its files.
func shareDir(t *testing.T) string {
	t.Helper()
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	d := t.TempDir()
	idx := filepath.Join(d, "share", "ament_index", "resource_index", "packages")
	if err := os.MkdirAll(idx, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(idx, "fsmnodes"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(repo, filepath.Join(d, "share", "fsmnodes")); err != nil {
		t.Fatal(err)
	}
	return d
}

// run is one evaluation of a launch file with its arguments.
type run struct {
	file string
	args []string
}

// describe evaluates the runs with r's launch library, in one Python
// process, and returns per run what it would start, or its error.
func describe(t *testing.T, r *testenv.ROS2, prefix string, runs []run) (starts [][]launched, errs []string) {
	t.Helper()
	script, _ := filepath.Abs("testdata/describe_launch.py")
	var in strings.Builder
	for _, rn := range runs {
		path, _ := filepath.Abs(filepath.Join(root, "launch", rn.file))
		fmt.Fprintf(&in, "%s %s\n", path, strings.Join(rn.args, " "))
	}
	cmd := r.Command(fmt.Sprintf(`unset GZ_VERSION IGNITION_VERSION; export AMENT_PREFIX_PATH=%s:"$AMENT_PREFIX_PATH"; exec python3 %s`, prefix, script))
	cmd.Stdin = strings.NewReader(in.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("describe_launch.py with %s: %v: %s", r.Distro, err, errb.String())
	}
	starts, errs = make([][]launched, len(runs)), make([]string, len(runs))
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			launched
			Run     int    `json:"run"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Run < 0 || l.Run >= len(runs) {
			t.Fatalf("describe_launch.py printed %q (%v)", sc.Text(), err)
		}
		if l.Kind == "error" {
			errs[l.Run] = l.Message
			continue
		}
		starts[l.Run] = append(starts[l.Run], l.launched)
	}
	return starts, errs
}

// TestLaunchFiles evaluates every Gazebo launch file for both generations
// with the launch library of each real ROS 2 here (nothing is started) and
// checks what it would start: the generation's simulator command on the
// generation's world, its robot files, bridge configurations that exist,
// executables of this package that exist, /clock bridged exactly once, the
// map from this package's mapper when slam_toolbox is not installed. This
// is the check Gazebo Harmonic gets: it cannot be built here.
func TestLaunchFiles(t *testing.T) {
	prefix := shareDir(t)
	var runs []run
	for _, g := range gazebo.Generations() {
		for _, file := range []string{"rsm_gazebo.launch.py", "hexapod_gazebo.launch.py", "demo_gazebo.launch.py"} {
			runs = append(runs, run{file, []string{"gz_version:=" + g.Name, "gui:=false"}})
		}
	}
	checks := len(runs)
	runs = append(runs,
		run{"rsm_gazebo.launch.py", []string{"gz_version:=classic"}},
		run{"rsm_gazebo.launch.py", []string{"gz_version:=fortress", "mapping:=gmapping"}},
		run{"gazebo.launch.py", []string{"gui:=true"}}, // auto
		run{"rsm_gazebo.launch.py", []string{"gz_version:=6", "mapping:=slam_toolbox"}})
	for _, r := range distros(t) {
		t.Run(r.Distro, func(t *testing.T) {
			starts, errs := describe(t, r, prefix, runs)
			for i, rn := range runs[:checks] {
				if errs[i] != "" {
					t.Errorf("%s %v: %s", rn.file, rn.args, errs[i])
					continue
				}
				g := gazebo.Fortress
				if strings.Contains(rn.args[0], "harmonic") {
					g = gazebo.Harmonic
				}
				t.Run(g.Name+"/"+rn.file, func(t *testing.T) { checkLaunched(t, g, rn.file, starts[i]) })
			}
			for i, value := range []string{"classic", "gmapping"} {
				if !strings.Contains(errs[checks+i], value) {
					t.Errorf("%v: %q, want refused naming %s", runs[checks+i].args, errs[checks+i], value)
				}
			}
			// auto: ROS_DISTRO decides when GZ_VERSION is unset
			want := gazebo.Harmonic
			if r.Distro == "humble" {
				want = gazebo.Fortress
			}
			if ls := starts[checks+2]; len(ls) == 0 || !slices.Equal(ls[0].Cmd[:2], want.Command) || slices.Contains(ls[0].Cmd, "-s") {
				t.Errorf("gz_version:=auto on %s with the window: %+v (%s), want %v without -s", r.Distro, ls, errs[checks+2], want.Command)
			}
			ls := starts[checks+3]
			if !slices.ContainsFunc(ls, func(l launched) bool { return l.Package == "slam_toolbox" }) ||
				slices.ContainsFunc(ls, func(l launched) bool { return l.Executable == "scan_mapper" }) {
				t.Errorf("mapping:=slam_toolbox does not start slam_toolbox alone: %+v (%s)", ls, errs[checks+3])
			}
		})
	}
}

func checkLaunched(t *testing.T, g gazebo.Gen, file string, ls []launched) {
	t.Helper()
	repo, _ := filepath.Abs(root)
	local := func(p string) string { // the repository file behind a share path
		if i := strings.Index(p, "/share/fsmnodes/"); i >= 0 {
			return filepath.Join(repo, p[i+len("/share/fsmnodes/"):])
		}
		return p
	}
	var sims, clocks int
	for _, l := range ls {
		switch {
		case l.Kind == "process":
			sims++
			wantCmd := append(append([]string{}, g.Command...), "-r", "-s")
			world := local(l.Cmd[len(l.Cmd)-1])
			if !slices.Equal(l.Cmd[:len(l.Cmd)-1], wantCmd) || world != filepath.Join(repo, "worlds", g.Name, gazebo.WorldName+".sdf") {
				t.Errorf("Gazebo %s started as %v", g.Name, l.Cmd)
			}
		case l.Package == "fsmnodes":
			if !fileExists(filepath.Join(repo, "nodes", l.Executable)) {
				t.Errorf("starts fsmnodes %s, which does not exist", l.Executable)
			}
			// Velma simulates its own hardware in its 500 Hz loop on the wall
			// clock (demo_gazebo.launch.py runs it beside Gazebo, not in it).
			if l.param("use_sim_time") == nil && l.Namespace != "/velma" {
				t.Errorf("%s does not run on Gazebo's clock (no use_sim_time)", l.Executable)
			}
			if l.Executable == "simple_navigator" && l.param("use_ground_truth") != nil {
				t.Errorf("the navigator gets use_ground_truth, a parameter it does not declare")
			}
			if l.Executable == "motion_control" && l.param("servo.driver") != "gazebo" {
				t.Errorf("motion_control on servo driver %v", l.param("servo.driver"))
			}
		case l.Package == "ros_gz_sim" && l.Executable == "create":
			i := slices.Index(l.Arguments, "-file")
			if i < 0 || i+1 >= len(l.Arguments) || !strings.HasPrefix(local(l.Arguments[i+1]), filepath.Join(repo, "worlds", g.Name)+"/") ||
				!fileExists(local(l.Arguments[i+1])) {
				t.Errorf("spawns %v: not a file of worlds/%s", l.Arguments, g.Name)
			}
			// Named, the world gets one 5 s request, which a Gazebo still
			// starting misses; unnamed, the spawner waits for Gazebo.
			if slices.Contains(l.Arguments, "-world") {
				t.Errorf("spawns with -world, which gives up if Gazebo is not up within 5 s: %v", l.Arguments)
			}
		case l.Package == "ros_gz_bridge":
			if slices.Contains(l.Arguments, "/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock") {
				clocks++
			}
			if c, ok := l.param("config_file").(string); ok && !fileExists(local(c)) {
				t.Errorf("bridge %s reads %s, which does not exist", l.Name, c)
			}
		case l.Package == "slam_toolbox":
			t.Errorf("starts slam_toolbox, which is not installed here (mapping:=auto must pick scan_mapper)")
		default:
			t.Errorf("starts %s %s", l.Package, l.Executable)
		}
	}
	if sims != 1 || clocks != 1 {
		t.Errorf("%d Gazebo processes and %d /clock bridges, want one of each", sims, clocks)
	}
	if file == "rsm_gazebo.launch.py" || file == "demo_gazebo.launch.py" {
		if !slices.ContainsFunc(ls, func(l launched) bool { return l.Executable == "scan_mapper" }) {
			t.Error("no map: scan_mapper is not started without slam_toolbox")
		}
	}
}
