// Package foxglovetest checks foxglove_bridge with an independent client:
// Foxglove's own npm packages (@foxglove/ws-protocol, @foxglove/rosmsg,
// @foxglove/rosmsg2-serialization, installed with npm ci from the
// committed lock file into a temporary directory) connect to a real
// foxglove_bridge process beside the built-in diffbot simulator and the
// RSM nodes, as Foxglove would.
package foxglovetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// installClient copies the client and its lock file into a temporary
// directory and installs the exact packages there with npm ci.
func installClient(t *testing.T) string {
	t.Helper()
	return testenv.NPMInstall(t, ".", "package.json", "package-lock.json", "client.js")
}

// bridgePort waits for the foxglove_bridge started by launch to listen and
// returns its port.
func bridgePort(t *testing.T, launch *testenv.Process) int {
	t.Helper()
	m := launch.WaitOutput(t, 60*time.Second, regexp.MustCompile(`listening on ws://127\.0\.0\.1:(\d+)`))
	port, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// results is what client.js reports.
type results struct {
	Error      string `json:"error"`
	ServerInfo struct {
		Name               string            `json:"name"`
		Capabilities       []string          `json:"capabilities"`
		SupportedEncodings []string          `json:"supportedEncodings"`
		Metadata           map[string]string `json:"metadata"`
	} `json:"serverInfo"`
	Channels []struct {
		Topic, Encoding, SchemaName, SchemaEncoding string
	} `json:"channels"`
	Services []struct {
		Name, Type string
	} `json:"services"`
	SchemaFailures []string `json:"schemaFailures"`
	OdomSchema     string   `json:"odomSchema"`
	OdomStart      struct {
		X, Y          float64
		Frame, Child  string
		ReceiveTimeNs string
	} `json:"odomStart"`
	Teleop struct {
		TwistsSent int     `json:"twistsSent"`
		Moved      float64 `json:"moved"`
	} `json:"teleop"`
	Estop struct {
		Stop, Release struct {
			Success bool   `json:"success"`
			Message string `json:"message"`
		}
	} `json:"estop"`
	ReadOnlyError                                                                         string `json:"readOnlyError"`
	ParamBefore, ParamSetReply, ParamUpdate, ParamAfter, ReadOnlyBefore, ReadOnlySetReply struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
		Type  string `json:"type"`
	}
	ParamNewValue float64  `json:"paramNewValue"`
	AllParams     int      `json:"allParams"`
	AllParamNodes []string `json:"allParamNodes"`
	ErrorStatuses []string `json:"errorStatuses"`
	ConnGraph     struct {
		OdomPublishers            []string `json:"odomPublishers"`
		CmdVelSubscribers         []string `json:"cmdVelSubscribers"`
		SetOperationModeProviders []string `json:"setOperationModeProviders"`
	} `json:"graph"`
}

func TestBridgeWithFoxgloveClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the RSM simulation and installs npm packages")
	}
	node := testenv.Tool(t, "node")
	dir := installClient(t)
	domain := testenv.Domain(t)
	bin := testenv.ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
	port := bridgePort(t, testenv.Launch(t, domain, "test/foxglove/testdata/bridge.launch.xml"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.js", fmt.Sprintf("ws://127.0.0.1:%d", port), "/diffbot")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	t.Logf("client progress:\n%s", stderr.String())
	var r results
	if err := json.Unmarshal(lastLine(stdout.Bytes()), &r); err != nil {
		t.Fatalf("client output is not a result (%v, run error %v):\n%s", err, runErr, stdout.String())
	}
	if runErr != nil || r.Error != "" {
		t.Fatalf("client failed: %v: %s", runErr, r.Error)
	}

	// serverInfo as foxglove_bridge sends it.
	si := r.ServerInfo
	if si.Name != "foxglove_bridge" || !slices.Equal(si.SupportedEncodings, []string{"cdr"}) || si.Metadata["ROS_DISTRO"] == "" {
		t.Errorf("serverInfo = %+v", si)
	}
	for _, c := range []string{"clientPublish", "services", "parameters", "parametersSubscribe", "connectionGraph"} {
		if !slices.Contains(si.Capabilities, c) {
			t.Errorf("capability %s missing from %v", c, si.Capabilities)
		}
	}
	// Channels: every topic of the simulation, cdr + ros2msg, and every
	// schema parsed by @foxglove/rosmsg.
	topics := map[string]string{}
	for _, c := range r.Channels {
		topics[c.Topic] = c.SchemaName
		if c.Encoding != "cdr" || c.SchemaEncoding != "ros2msg" {
			t.Errorf("channel %s: encoding %q, schema encoding %q", c.Topic, c.Encoding, c.SchemaEncoding)
		}
	}
	for topic, typ := range map[string]string{
		"/diffbot/odom": "nav_msgs/msg/Odometry", "/diffbot/scan": "sensor_msgs/msg/LaserScan",
		"/diffbot/map": "nav_msgs/msg/OccupancyGrid", "/diffbot/tf": "tf2_msgs/msg/TFMessage",
		"/diffbot/rsm/operationMode": "rsm_msgs/msg/OperationMode", "/rosout": "rcl_interfaces/msg/Log",
	} {
		if topics[topic] != typ {
			t.Errorf("channel %s has schema %q, want %s (channels: %v)", topic, topics[topic], typ, topics)
		}
	}
	if len(r.SchemaFailures) > 0 {
		t.Errorf("schemas @foxglove/rosmsg could not parse:\n%s", strings.Join(r.SchemaFailures, "\n"))
	}
	sep := "\n" + strings.Repeat("=", 80) + "\nMSG: "
	if !strings.HasPrefix(r.OdomSchema, "# pose is in header.frame_id") || !strings.Contains(r.OdomSchema, sep+"std_msgs/Header\n") ||
		!strings.Contains(r.OdomSchema, sep+"geometry_msgs/PoseWithCovariance\n") {
		t.Errorf("odometry schema is not the definition followed by MSG: sections:\n%s", r.OdomSchema)
	}
	svcs := map[string]string{}
	for _, s := range r.Services {
		svcs[s.Name] = s.Type
	}
	if svcs["/diffbot/rsm/setOperationMode"] != "rsm_msgs/srv/SetOperationMode" ||
		svcs["/diffbot/robotControlMuxNode/get_parameters"] != "rcl_interfaces/srv/GetParameters" {
		t.Errorf("services: %v", svcs)
	}
	// Odometry decoded from the advertised schema; receive time is now-ish.
	if r.OdomStart.Frame != "odom" || r.OdomStart.Child != "base_footprint" {
		t.Errorf("decoded odometry frames %q -> %q", r.OdomStart.Frame, r.OdomStart.Child)
	}
	var recv int64
	fmt.Sscan(r.OdomStart.ReceiveTimeNs, &recv)
	if age := time.Since(time.Unix(0, recv)); age < 0 || age > 5*time.Minute {
		t.Errorf("receive timestamp %s is %v from now", r.OdomStart.ReceiveTimeNs, age)
	}
	// The Twist the client published moved the simulated robot.
	if r.Teleop.Moved <= 0.2 {
		t.Errorf("teleoperation moved the robot %.3f m", r.Teleop.Moved)
	}
	if !r.Estop.Stop.Success || !r.Estop.Release.Success {
		t.Errorf("setOperationMode answers: %+v", r.Estop)
	}
	// Parameters named /node.param; the double carries type float64. A
	// read-only parameter keeps its value and the node's reason reaches
	// the client.
	// (teleoperation_idle_timer, read-only before, is live now.)
	const readOnly = "/diffbot/robotControlMuxNode.initial_operation_mode"
	if r.ReadOnlyBefore.Name != readOnly || r.ReadOnlyBefore.Value != 0.0 || r.ReadOnlyBefore.Type != "" {
		t.Errorf("read-only parameter: %+v", r.ReadOnlyBefore)
	}
	if r.ReadOnlySetReply.Value != 0.0 || !strings.Contains(r.ReadOnlyError, "read-only") {
		t.Errorf("setting a read-only parameter: reply %+v, status %q", r.ReadOnlySetReply, r.ReadOnlyError)
	}
	const param = "/diffbot/diff_drive_sim.max_angular_velocity"
	before, _ := r.ParamBefore.Value.(float64)
	if r.ParamBefore.Name != param || before <= 0 || r.ParamBefore.Type != "float64" || r.ParamNewValue != before+0.5 {
		t.Errorf("parameter before: %+v (new value %v)", r.ParamBefore, r.ParamNewValue)
	}
	for what, p := range map[string]struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
		Type  string `json:"type"`
	}{"set reply": r.ParamSetReply, "update": r.ParamUpdate, "after": r.ParamAfter} {
		if p.Name != param || p.Value != r.ParamNewValue || p.Type != "float64" {
			t.Errorf("parameter %s: %+v, want %s = %v", what, p, param, r.ParamNewValue)
		}
	}
	for _, n := range []string{"/diffbot/robotControlMuxNode", "/diffbot/diff_drive_sim", "/diffbot/navigator"} {
		if !slices.Contains(r.AllParamNodes, n) {
			t.Errorf("getParameters of everything lacks node %s: %v", n, r.AllParamNodes)
		}
	}
	if slices.Contains(r.AllParamNodes, "/foxglove_bridge") {
		t.Error("the bridge lists its own parameters (foxglove_bridge leaves itself out)")
	}
	// The connection graph names nodes.
	g := r.ConnGraph
	if !slices.Contains(g.OdomPublishers, "/diffbot/diff_drive_sim") || !slices.Contains(g.CmdVelSubscribers, "/diffbot/diff_drive_sim") ||
		!slices.Contains(g.SetOperationModeProviders, "/diffbot/robotControlMuxNode") {
		t.Errorf("connection graph: %+v", g)
	}
	if len(r.ErrorStatuses) > 0 {
		t.Errorf("the bridge sent error statuses: %v", r.ErrorStatuses)
	}

	// What the client set is real: ask the node with our own CLI.
	get := exec.Command(filepath.Join(bin, "fsmnodes"), "param", "get", "/diffbot/diff_drive_sim", "max_angular_velocity")
	get.Env = append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	out, err := get.CombinedOutput()
	if err != nil || !strings.Contains(string(out), strconv.FormatFloat(r.ParamNewValue, 'f', -1, 64)) {
		t.Errorf("fsmnodes param get: %v\n%s", err, out)
	}
}

func lastLine(b []byte) []byte {
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			last = append(last[:0], sc.Bytes()...)
		}
	}
	return last
}
