package multihost

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// discoveryMode is one way users set up discovery between two machines.
type discoveryMode struct {
	name string
	// distro is whose semantics the variables have ("humble", "jazzy"):
	// our processes get ROS_DISTRO=distro, and the real peer, when there is
	// one, is that distro's rclcpp.
	distro string
	// block drops multicast at the switch.
	block bool
	// robot and operator are the variables of each host; "$ROBOT" and
	// "$OPERATOR" stand for the hosts' addresses.
	robot, operator []string
	// discover says whether the two hosts must find each other.
	discover bool
	// sameHost, when set, is whether a second process on the robot must
	// find the robot's talker (LOCALHOST does, OFF does not).
	sameHost *bool
}

func ptr[T any](v T) *T { return &v }

// cyclonePeers is a Humble user's Cyclone configuration naming peers.
func cyclonePeers(addr string) string {
	return "CYCLONEDDS_URI=<CycloneDDS><Domain><Discovery><Peers><Peer address=\"" + addr +
		"\"/></Peers><ParticipantIndex>auto</ParticipantIndex></Discovery></Domain></CycloneDDS>"
}

// discoveryModes are the rows of TestDiscovery: each mode a user meets,
// with what rcl documents (rcl/discovery_options.h, rmw_cyclonedds_cpp's
// check_create_domain; docs/multihost.md has the table).
var discoveryModes = []discoveryMode{
	{name: "jazzy/multicast", distro: "jazzy", discover: true},
	{name: "jazzy/SUBNET", distro: "jazzy", robot: []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET"},
		operator: []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET"}, discover: true},
	{name: "jazzy/blocked-no-peers", distro: "jazzy", block: true, discover: false},
	{name: "jazzy/blocked-static-peers", distro: "jazzy", block: true,
		robot: []string{"ROS_STATIC_PEERS=$OPERATOR"}, operator: []string{"ROS_STATIC_PEERS=$ROBOT"}, discover: true},
	// A peer list on one side is enough in Jazzy: SUBNET always sets
	// ParticipantIndex auto, so the robot listens on the well-known unicast
	// ports the operator's announcements go to, and answers them.
	{name: "jazzy/blocked-static-peer-operator-only", distro: "jazzy", block: true,
		operator: []string{"ROS_STATIC_PEERS=$ROBOT"}, discover: true},
	{name: "jazzy/LOCALHOST", distro: "jazzy", robot: []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"},
		operator: []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"}, discover: false, sameHost: ptr(true)},
	{name: "jazzy/LOCALHOST-static-peers", distro: "jazzy", block: true,
		robot:    []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", "ROS_STATIC_PEERS=$OPERATOR"},
		operator: []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", "ROS_STATIC_PEERS=$ROBOT"}, discover: true},
	{name: "jazzy/OFF", distro: "jazzy", robot: []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=OFF"},
		discover: false, sameHost: ptr(false)},
	{name: "jazzy/OFF-ignores-static-peers", distro: "jazzy", block: true,
		robot:    []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=OFF", "ROS_STATIC_PEERS=$OPERATOR"},
		operator: []string{"ROS_STATIC_PEERS=$ROBOT"}, discover: false},
	{name: "humble/multicast", distro: "humble", discover: true},
	{name: "humble/blocked-no-peers", distro: "humble", block: true, discover: false},
	{name: "humble/blocked-cyclone-peers", distro: "humble", block: true,
		robot: []string{cyclonePeers("$OPERATOR")}, operator: []string{cyclonePeers("$ROBOT")}, discover: true},
	// Not in Humble: the robot, without a Cyclone configuration, keeps
	// Cyclone's default ParticipantIndex none (ephemeral unicast ports),
	// so the announcements sent to the well-known ports reach nobody.
	{name: "humble/blocked-cyclone-peer-operator-only", distro: "humble", block: true,
		operator: []string{cyclonePeers("$ROBOT")}, discover: false},
	{name: "humble/ROS_LOCALHOST_ONLY", distro: "humble", robot: []string{"ROS_LOCALHOST_ONLY=1"},
		operator: []string{"ROS_LOCALHOST_ONLY=1"}, discover: false, sameHost: ptr(true)},
}

// quiet is how long a mode that must not discover is watched. Cyclone
// sends its first participant announcements within a second of start.
const quiet = 5 * time.Second

// discoverLimit bounds the wait for a mode that must discover.
const discoverLimit = 40 * time.Second

// startLimit bounds a talker's start-up, until it says it is ready: not
// what the test measures, and under make test's load an rclcpp talker
// once said nothing for 40 s (CI run 46 of session 16).
const startLimit = 120 * time.Second

var heard = regexp.MustCompile(`data: (hello|hi)`)

// TestDiscovery runs a talker on the robot and a listener (our CLI's topic
// echo) on the operator station in each discovery mode, and checks that
// they find each other exactly when rcl says they do. The talker is ours
// (fsmnodes topic pub) and, where a real ROS 2 of the mode's distro is
// installed, also rclcpp (ros2_peer talker). The time from the listener's
// start to its first message is logged per mode.
func TestDiscovery(t *testing.T) {
	needNetns(t)
	cli := testenv.Executable(t, "cmd/fsmnodes")
	for _, m := range discoveryModes {
		for _, talker := range []string{"ours", "rclcpp"} {
			t.Run(m.name+"/"+talker, func(t *testing.T) {
				t.Parallel()
				var peer *rclcppPeer
				if talker == "rclcpp" {
					peer = needPeer(t, m.distro)
				}
				runDiscovery(t, cli, m, peer)
			})
		}
	}
}

func runDiscovery(t *testing.T, cli string, m discoveryMode, peer *rclcppPeer) {
	domain := testenv.Domain(t)
	net := NewNet(t, "robot", "operator")
	if m.block {
		net.BlockMulticast()
	}
	robot, op := net.Host("robot"), net.Host("operator")
	expand := func(vars []string) []string {
		r := strings.NewReplacer("$ROBOT", robot.Addr, "$OPERATOR", op.Addr)
		out := []string{"ROS_DISTRO=" + m.distro}
		for _, v := range vars {
			out = append(out, r.Replace(v))
		}
		return out
	}
	robotEnv, opEnv := robot.Env(domain, expand(m.robot)...), op.Env(domain, expand(m.operator)...)
	const topic = "/mh_chatter"
	if peer != nil {
		robot.StartPeer(t, peer, "talker", robotEnv, "talker", topic).WaitOutput(t, startLimit, regexp.MustCompile(`ready`))
	} else {
		robot.Start(t, "talker", robotEnv, cli, "topic", "pub", topic, "std_msgs/msg/String", "{data: hi}", "-r", "10", "-p", "1000").
			WaitOutput(t, startLimit, regexp.MustCompile(`publisher: beginning loop`))
	}
	start := time.Now()
	echo := op.Start(t, "listener", opEnv, cli, "topic", "echo", topic, "std_msgs/msg/String")
	var local *testenv.Process
	if m.sameHost != nil {
		local = robot.Start(t, "local-listener", robotEnv, cli, "topic", "echo", topic, "std_msgs/msg/String")
	}
	if m.discover {
		echo.WaitOutput(t, discoverLimit, heard)
		t.Logf("FIGURE discovery %s (talker %s): operator heard the robot %.2f s after its start",
			m.name, talkerName(peer), time.Since(start).Seconds())
	} else {
		time.Sleep(quiet)
		echo.MustRun(t)
		if heard.MatchString(echo.Output()) {
			t.Errorf("%s: the operator heard the robot; rcl says the hosts do not discover each other in this mode", m.name)
		}
	}
	if local != nil {
		got := heard.MatchString(local.Output())
		if *m.sameHost && !got {
			local.WaitOutput(t, discoverLimit, heard)
		}
		if !*m.sameHost && got {
			t.Errorf("%s: a second process on the robot heard the talker; rcl says discovery is off even on the same host", m.name)
		}
	}
}

func talkerName(p *rclcppPeer) string {
	if p == nil {
		return "ours"
	}
	return "rclcpp " + p.distro
}

// rclcppPeer is test/ros2's rclcpp peer built against one ROS 2.
type rclcppPeer struct {
	distro  string
	setup   string // the installation's env.sh
	overlay string // build-peer.sh's directory: install/setup.bash, bin/ros2_peer
}

var peers sync.Map // distro -> func() (*rclcppPeer, error)

// needPeer returns the rclcpp peer of the distro (built once by
// test/ros2/build-peer.sh, cached), or skips the test with a message on
// stderr when that ROS 2 is not installed.
func needPeer(t *testing.T, distro string) *rclcppPeer {
	t.Helper()
	prefix := "/opt/ros2-" + distro
	if _, err := os.Stat(filepath.Join(prefix, "env.sh")); err != nil {
		why := fmt.Sprintf("no ROS 2 %s in %s: the rclcpp side of this mode is not checked", distro, prefix)
		fmt.Fprintf(os.Stderr, "SKIP %s: %s\n", t.Name(), why)
		t.Skip(why)
	}
	f, _ := peers.LoadOrStore(distro, sync.OnceValues(func() (*rclcppPeer, error) {
		root, err := testenv.ModuleRoot()
		if err != nil {
			return nil, err
		}
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		c := exec.Command("bash", filepath.Join(root, "test/ros2/build-peer.sh"), filepath.Join(cache, "fsmnodes", "ros2-peer"))
		c.Env = append(os.Environ(), "ROS2_PREFIX="+prefix)
		out, err := c.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				err = fmt.Errorf("%v\n%s", err, ee.Stderr)
			}
			return nil, fmt.Errorf("build-peer.sh: %w", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return &rclcppPeer{distro: distro, setup: filepath.Join(prefix, "env.sh"), overlay: lines[len(lines)-1]}, nil
	}))
	p, err := f.(func() (*rclcppPeer, error))()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// StartPeer runs the rclcpp peer in mode with args on the host: the ROS 2
// installation and the overlay sourced, then the discovery variables of env
// (the sourcing sets ROS_DISTRO and RMW_IMPLEMENTATION only).
func (h *Host) StartPeer(t *testing.T, p *rclcppPeer, name string, env []string, args ...string) *testenv.Process {
	t.Helper()
	var vars []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "ROS_") || strings.HasPrefix(kv, "CYCLONEDDS_URI=") {
			if !strings.HasPrefix(kv, "ROS_DISTRO=") {
				vars = append(vars, shellQuote(kv))
			}
		}
	}
	script := ". " + shellQuote(p.setup) + " && . " + shellQuote(filepath.Join(p.overlay, "install", "setup.bash")) +
		" && export " + strings.Join(vars, " ") + " && exec " + shellQuote(filepath.Join(p.overlay, "bin", "ros2_peer"))
	for _, a := range args {
		script += " " + shellQuote(a)
	}
	return h.Start(t, name, env, "/bin/bash", "-c", script)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
