package gazebo

import (
	"encoding/xml"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fsmnodes/fsmnodes/internal/hexapod"
)

var update = flag.Bool("update", false, "rewrite the Gazebo files of worlds/ and params/ from this package")

const root = "../.."

// HexapodBridgeFile is the committed bridge configuration of the hexapod.
const hexapodBridgeFile = "params/gz_bridge_hexapod.yaml"

const hexapodBridgeComment = `ros_gz_bridge configuration of launch/hexapod_gazebo.launch.py: the goal of each
of the 18 joints to its JointPositionController, the measured joints and the
body's pose in Gazebo's world back. The ROS names are relative: the bridge runs
in the hexapod's namespace. Written by internal/gazebo; do not edit
(go test ./internal/gazebo -update). Read once at start-up by the bridge.`

// committed returns every generated file with its contents.
func committed(t *testing.T) map[string]string {
	t.Helper()
	urdf, err := os.ReadFile(filepath.Join(root, "urdf/hexapod.urdf"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{hexapodBridgeFile: BridgeYAML(hexapodBridgeComment, HexapodBridge())}
	for _, g := range Generations() {
		fs, err := Files(g, string(urdf))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range fs {
			all[k] = v
		}
	}
	return all
}

// TestFilesMatchCommitted keeps the committed Gazebo files in step with
// the built-in world, the robots and this package.
func TestFilesMatchCommitted(t *testing.T) {
	for name, want := range committed(t) {
		path := filepath.Join(root, name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s is stale: run go test ./internal/gazebo -update", name)
		}
	}
}

// TestFilesWellFormed checks every file is XML with unique names among the
// siblings of each element kind sdformat requires unique (the error `ign sdf
// -k` reported for the first world: a collision and a visual both "body").
func TestFilesWellFormed(t *testing.T) {
	for name, s := range committed(t) {
		if !strings.HasSuffix(name, ".sdf") && !strings.HasSuffix(name, ".urdf") {
			continue
		}
		d := xml.NewDecoder(strings.NewReader(s))
		type scope struct{ names map[string]string }
		stack := []scope{{map[string]string{}}}
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", name, err)
			}
			switch e := tok.(type) {
			case xml.StartElement:
				for _, a := range e.Attr {
					if a.Name.Local != "name" || !strings.HasSuffix(name, ".sdf") {
						continue
					}
					switch e.Name.Local {
					case "link", "joint", "collision", "visual", "sensor", "model", "light":
						top := stack[len(stack)-1].names
						if prev, ok := top[a.Value]; ok {
							t.Errorf("%s: <%s name=%q> repeats the name of a <%s>", name, e.Name.Local, a.Value, prev)
						}
						top[a.Value] = e.Name.Local
					}
				}
				stack = append(stack, scope{map[string]string{}})
			case xml.EndElement:
				stack = stack[:len(stack)-1]
			}
		}
	}
}

// Each generation's files use only its own names.
func TestGenerationNames(t *testing.T) {
	files := committed(t)
	for _, g := range Generations() {
		other := Harmonic
		if g.Name == Harmonic.Name {
			other = Fortress
		}
		for name, s := range files {
			if !strings.HasPrefix(name, "worlds/"+g.Name+"/") {
				continue
			}
			if !strings.Contains(s, `filename="`+strings.SplitN(g.pluginFile, "%", 2)[0]) {
				t.Errorf("%s loads no %s system", name, g.Name)
			}
			for _, bad := range []string{strings.SplitN(other.pluginFile, "%", 2)[0], strings.SplitN(other.pluginClass, "%", 2)[0], "<" + other.frameTag + ">",
				"<render_engine>" + other.RenderEngine + "<"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s (Gazebo %s) contains %s's %q", name, g.Name, other.Name, bad)
				}
			}
		}
	}
	if !strings.Contains(FsmbotSDF(Fortress), "<ignition_frame_id>laser</ignition_frame_id>") ||
		!strings.Contains(FsmbotSDF(Harmonic), "<gz_frame_id>laser</gz_frame_id>") {
		t.Error("the lidar's frame is not set for each generation")
	}
	if !strings.Contains(WorldSDF(Fortress), "<render_engine>ogre</render_engine>") {
		t.Error("Fortress has only the ogre engine (no ogre2 on Debian)")
	}
}

// The hexapod's Gazebo URDF drives every joint and is otherwise the URDF.
func TestHexapodURDF(t *testing.T) {
	urdf, err := os.ReadFile(filepath.Join(root, "urdf/hexapod.urdf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range Generations() {
		s, err := HexapodURDF(g, string(urdf))
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range hexapod.JointNames() {
			if !strings.Contains(s, "<joint_name>"+j+"</joint_name>") {
				t.Errorf("%s: joint %s has no position controller", g.Name, j)
			}
		}
		if n := strings.Count(s, "JointPositionController"); n != hexapod.NumJoints {
			t.Errorf("%s: %d position controllers", g.Name, n)
		}
	}
	if _, err := HexapodURDF(Fortress, "<robot/>"); err == nil {
		t.Error("a URDF without the joints was accepted")
	}
	if _, err := HexapodURDF(Fortress, strings.Replace(string(urdf), `name="TIBIA_LF" type="revolute"`, `name="TIBIA_LF" type="fixed"`, 1)); err == nil {
		t.Error("a URDF with a fixed TIBIA_LF was accepted")
	}
}

// The hexapod's bridge carries every joint both ways and parses as the
// bridge reads it.
func TestHexapodBridge(t *testing.T) {
	var es []BridgeEntry
	dec := yaml.NewDecoder(strings.NewReader(committed(t)[hexapodBridgeFile]))
	dec.KnownFields(true)
	if err := dec.Decode(&es); err != nil {
		t.Fatal(err)
	}
	if len(es) != hexapod.NumJoints+2 {
		t.Fatalf("%d entries", len(es))
	}
	seen := map[string]bool{}
	for _, e := range es {
		if seen[e.ROSTopic] || strings.HasPrefix(e.ROSTopic, "/") || !strings.HasPrefix(e.GZTopic, "/model/"+HexapodModel+"/") {
			t.Errorf("entry %+v: repeated, absolute or not the hexapod's", e)
		}
		seen[e.ROSTopic] = true
	}
}

// TestSDFormatAccepts runs sdformat's own check (`ign sdf -k`, `gz sdf -k`)
// on every file, with each tool that is installed. Debian 12 has `ign` with
// sdformat 12 (Fortress's); Harmonic's gz is not available here, so its
// files are checked by sdformat 12 only (their plugin names are strings to
// it).
func TestSDFormatAccepts(t *testing.T) {
	files := committed(t)
	ran := false
	for _, tool := range []string{"ign", "gz"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			continue
		}
		if out, err := exec.Command(path, "sdf", "--help").CombinedOutput(); err != nil {
			t.Logf("%s sdf is not available: %v %s", tool, err, out)
			continue
		}
		ran = true
		for name := range files {
			if strings.HasSuffix(name, ".yaml") {
				continue
			}
			out, err := exec.Command(path, "sdf", "-k", filepath.Join(root, name)).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Valid.") {
				t.Errorf("%s sdf -k %s: %v\n%s", tool, name, err, out)
			} else {
				t.Logf("%s sdf -k %s: Valid.", tool, name)
			}
		}
	}
	if !ran {
		t.Skip("neither ign nor gz with the sdf command is installed (Debian: ignition-tools, libsdformat12): sdformat's check did not run")
	}
}
