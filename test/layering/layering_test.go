// Package layering checks the project's import rule: behaviour packages
// (the robots' state machines, gaits, kinematics, simulators) import no
// middleware. Only their ROS adapters — packages whose name ends in "node"
// (hexapodnode, rsmnode, velmanode, simnode, joynode, …) — and the
// infrastructure packages listed in infrastructure may import internal/ros,
// internal/dds or the generated msgs.
package layering

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/fsmnodes/fsmnodes"

// infrastructure are the internal packages (with their subpackages) that
// are not behaviour: the client library, its transport and tools. A new
// internal package is behaviour unless it is added here.
var infrastructure = []string{
	"internal/ros", "internal/dds", "internal/cdr", "internal/rosidl", "internal/msggen",
	"internal/msgyaml", "internal/cli", "internal/launch", "internal/testenv", "internal/tools",
	"internal/goid", "internal/foxglove", "internal/dashboard", "internal/bag",
}

// forbidden are the import paths (and their subpackages) a behaviour
// package must not depend on, directly or indirectly.
var forbidden = []string{"internal/ros", "internal/dds", "msgs"}

// isBehaviour reports whether the module-relative package rel is a
// behaviour package.
func isBehaviour(rel string) bool {
	if !strings.HasPrefix(rel, "internal/") || strings.HasSuffix(path.Base(rel), "node") {
		return false
	}
	for _, p := range infrastructure {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return false
		}
	}
	return true
}

// violations lists "pkg imports dep" for every behaviour package of deps
// (module-relative package → its module-relative dependencies) that
// depends on a forbidden package.
func violations(deps map[string][]string) []string {
	var out []string
	for pkg, ds := range deps {
		if !isBehaviour(pkg) {
			continue
		}
		for _, d := range ds {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					out = append(out, fmt.Sprintf("%s depends on %s", pkg, d))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestViolations_Rule checks the rule itself on a made-up graph, so a
// broken checker cannot pass the real check below by finding nothing.
func TestViolations_Rule(t *testing.T) {
	deps := map[string][]string{
		"internal/rsm":              {"internal/rsm/tf"},
		"internal/rsm/rsmnode":      {"internal/ros", "msgs/std_msgs/msg"},
		"internal/hexapod":          {"internal/ros/param"},
		"internal/velma/kin":        {"msgs/geometry_msgs/msg"},
		"internal/newrobot":         {"internal/dds"},
		"internal/cli":              {"internal/ros"},
		"internal/rosidl":           {"internal/cdr"},
		"internal/sim/simnode":      {"internal/dds"},
		"internal/velma/la":         {"internal/velma/lattice"},
		"internal/joy/joynode/util": {"internal/ros"},
	}
	got := violations(deps)
	want := []string{
		"internal/hexapod depends on internal/ros/param",
		"internal/joy/joynode/util depends on internal/ros",
		"internal/newrobot depends on internal/dds",
		"internal/velma/kin depends on msgs/geometry_msgs/msg",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestBehaviourPackages_ImportNoMiddleware runs go list over the module's
// internal packages and fails on every behaviour package that depends on
// the client library, DDS or generated messages.
func TestBehaviourPackages_ImportNoMiddleware(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, module+"/internal/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	deps := map[string][]string{}
	behaviour := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], module+"/")
		for _, d := range fields[1:] {
			if rel, ok := strings.CutPrefix(d, module+"/"); ok {
				deps[pkg] = append(deps[pkg], rel)
			}
		}
		if isBehaviour(pkg) {
			behaviour++
		}
	}
	if behaviour < 5 {
		t.Fatalf("only %d behaviour packages found; the package walk is broken", behaviour)
	}
	if v := violations(deps); len(v) > 0 {
		t.Errorf("behaviour packages must not import the middleware (docs/contributing.md):\n%s", strings.Join(v, "\n"))
	}
}
