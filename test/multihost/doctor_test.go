package multihost

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// doctorWait is how long `fsmnodes doctor` listens in these tests: a little
// more than Cyclone's 8 s between announcements.
const doctorWait = "9"

// noWarning matches every warning but the domain id range one (the domain
// of a test may be above 101, harmless inside the test's own namespaces).
const noWarning = `WARNING: [^R]`

// doctorCase is one network set-up and what `fsmnodes doctor` must say
// about it on the operator station.
type doctorCase struct {
	name  string
	block bool
	// robot, monitor and operator are the variables of each host's
	// processes; "$ROBOT" and "$OPERATOR" stand for their addresses.
	robot, monitor, operator []string
	// start runs the processes on the robot and the monitor.
	start func(t *testing.T, c *doctorRun)
	// want are patterns the report must match; wantNot must not.
	want, wantNot []string
}

// doctorRun is one case's running network.
type doctorRun struct {
	net                  *Net
	cli, probe           string
	domain               uint32
	robotEnv, monitorEnv []string
	robot, monitor, op   *Host
}

// talker runs our CLI's publisher on host h under node name node.
func (c *doctorRun) talker(t *testing.T, h *Host, env []string, node string, extra ...string) {
	args := append([]string{"topic", "pub", "/mh_chatter", "std_msgs/msg/String", "{data: hi}", "-r", "5", "-p", "1000", "-n", node}, extra...)
	h.Start(t, "talker-"+node, env, c.cli, args...).WaitOutput(t, 30*time.Second, regexp.MustCompile(`publisher: beginning loop`))
}

var doctorCases = []doctorCase{
	{
		name: "multicast-works",
		start: func(t *testing.T, c *doctorRun) {
			c.talker(t, c.robot, c.robotEnv, "robot_talker")
		},
		want: []string{
			`eth0 +10\.231\.0\.3/24 +up, multicast works: announcements of other hosts arrive \(10\.231\.0\.1\)`,
			`participant [0-9a-f]{8}: 10\.231\.0\.1, host robot, Eclipse Cyclone DDS [0-9.]+, ROS 2 Jazzy wire \(type hashes\), nodes /robot_talker`,
		},
		wantNot: []string{noWarning},
	},
	{
		name: "multicast-blocked-no-peers", block: true,
		start: func(t *testing.T, c *doctorRun) {
			c.talker(t, c.robot, c.robotEnv, "robot_talker")
		},
		want: []string{
			`eth0 +10\.231\.0\.3/24 +up, multicast: no announcement of another host arrived in 9 s`,
			`WARNING: multicast: no participant announcement of another host arrived on eth0 in 9 s, and no static peers are set`,
			`ROS_STATIC_PEERS=<its address> on both machines`,
		},
		wantNot: []string{`/robot_talker`},
	},
	{
		name: "multicast-blocked-static-peers", block: true,
		robot: []string{"ROS_STATIC_PEERS=$OPERATOR"}, operator: []string{"ROS_STATIC_PEERS=$ROBOT"},
		start: func(t *testing.T, c *doctorRun) {
			c.talker(t, c.robot, c.robotEnv, "robot_talker")
		},
		want: []string{
			`ROS_STATIC_PEERS +10\.231\.0\.1\n`,
			`address unknown \(not heard by multicast\), ROS 2 Jazzy wire \(type hashes\), nodes /robot_talker`,
		},
		wantNot: []string{noWarning},
	},
	{
		name:    "dialect-mix",
		robot:   []string{"ROS_DISTRO=humble"},
		monitor: []string{"ROS_DISTRO=jazzy"},
		start: func(t *testing.T, c *doctorRun) {
			c.talker(t, c.robot, c.robotEnv, "humble_talker")
			c.talker(t, c.monitor, c.monitorEnv, "jazzy_talker")
		},
		want: []string{
			`host robot, Eclipse Cyclone DDS [0-9.]+, ROS 2 Humble wire \(no type hashes\)`,
			`WARNING: Humble and Jazzy share domain \d+: Humble 10\.231\.0\.1 \(robot\); Jazzy 10\.231\.0\.2 \(monitor\)`,
		},
	},
	{
		name: "foreign-vendor",
		start: func(t *testing.T, c *doctorRun) {
			c.talker(t, c.robot, c.robotEnv, "robot_talker")
			c.monitor.Start(t, "fastdds", c.monitorEnv, c.probe, "fakespdp", "010f", fmt.Sprint(c.domain)).
				WaitOutput(t, 10*time.Second, regexp.MustCompile(`sending`))
		},
		want: []string{
			`participant 010f[0-9a-f]{4}: 10\.231\.0\.2, eProsima Fast DDS, ROS 2`,
			`WARNING: participant at 10\.231\.0\.2 runs eProsima Fast DDS, not Cyclone DDS \(rmw_cyclonedds_cpp\): ` +
				`its topics can match, but ROS 2 services and actions do not work between DDS vendors`,
		},
	},
	{
		name: "incompatible-qos",
		start: func(t *testing.T, c *doctorRun) {
			c.talker(t, c.robot, c.robotEnv, "best_effort_talker", "--qos-reliability", "best_effort")
			c.monitor.Start(t, "listener", c.monitorEnv, c.cli, "topic", "echo", "/mh_chatter", "std_msgs/msg/String",
				"--qos-reliability", "reliable")
		},
		want: []string{
			`WARNING: topic /mh_chatter: publisher /best_effort_talker and subscription /_fsmnodes_echo_\d+ have incompatible QoS ` +
				`\(reliability: best effort offered, reliable requested\): the subscription receives nothing from it`,
		},
	},
	{
		name: "one-node-name-on-two-hosts",
		start: func(t *testing.T, c *doctorRun) {
			c.talker(t, c.robot, c.robotEnv, "diffbot_mux")
			c.talker(t, c.monitor, c.monitorEnv, "diffbot_mux")
		},
		want: []string{
			`WARNING: node /diffbot_mux runs in 2 processes \(10\.231\.0\.1 \(robot\); 10\.231\.0\.2 \(monitor\)\): ` +
				`two robots or two launches share domain \d+`,
		},
	},
}

// TestDoctor sets up each broken (and one sound) network and checks what
// `fsmnodes doctor` on the operator station says about it; the reports are
// logged.
func TestDoctor(t *testing.T) {
	needNetns(t)
	cli := testenv.Executable(t, "cmd/fsmnodes")
	probe := testenv.Executable(t, "test/multihost/mhprobe")
	for _, dc := range doctorCases {
		t.Run(dc.name, func(t *testing.T) {
			t.Parallel()
			domain := testenv.Domain(t)
			net := NewNet(t, "robot", "monitor", "operator")
			if dc.block {
				net.BlockMulticast()
			}
			c := &doctorRun{net: net, cli: cli, probe: probe, domain: domain,
				robot: net.Host("robot"), monitor: net.Host("monitor"), op: net.Host("operator")}
			expand := func(vars []string) []string {
				r := strings.NewReplacer("$ROBOT", c.robot.Addr, "$OPERATOR", c.op.Addr)
				var out []string
				for _, v := range vars {
					out = append(out, r.Replace(v))
				}
				return out
			}
			c.robotEnv, c.monitorEnv = c.robot.Env(domain, expand(dc.robot)...), c.monitor.Env(domain, expand(dc.monitor)...)
			dc.start(t, c)
			cmd := c.op.Command(c.op.Env(domain, expand(dc.operator)...), cli, "doctor", "--wait", doctorWait)
			out, err := cmd.CombinedOutput()
			t.Logf("fsmnodes doctor on the operator station:\n%s", out)
			if err != nil {
				t.Fatalf("fsmnodes doctor: %v", err)
			}
			for _, w := range dc.want {
				if !regexp.MustCompile(w).Match(out) {
					t.Errorf("the report does not match %q", w)
				}
			}
			for _, w := range dc.wantNot {
				if regexp.MustCompile(w).Match(out) {
					t.Errorf("the report matches %q", w)
				}
			}
		})
	}
}
