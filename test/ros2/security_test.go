package ros2

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// SROS2 against real ROS 2: keystores made by the real `ros2 security`
// (sros2 of the Humble build: the keystore does not depend on the distro,
// and the Jazzy build has no sros2), our processes and real rclcpp/rclpy
// with ROS_SECURITY_* set as a user sets them (docs/security.md#sros2).

// sros2Env is the environment that has `ros2 security`: the peer's when it
// has sros2, else the Humble build's.
var sros2Env = sync.OnceValues(func() ([]string, error) {
	if _, err := os.Stat(filepath.Join(peer.prefix, "install/share/sros2")); err == nil {
		return peer.rosEnv, nil
	}
	return sourceEnv(peer.baseEnv, "/opt/ros2-humble/env.sh")
})

// keystore creates a keystore with real `ros2 security` for the test's
// domain (sros2 writes ROS_DOMAIN_ID into the governance and permissions)
// with one enclave per name (the default policy: everything allowed) and,
// per policies entry, an enclave whose permissions come from that policy
// XML (create_permission). It returns the keystore's path.
func (d *dom) keystore(enclaves []string, policies map[string]string) string {
	d.t.Helper()
	env, err := sros2Env()
	if err != nil {
		d.t.Skipf("no ros2 security (sros2) to make a keystore: %v", err)
	}
	env = append(append([]string(nil), env...), d.vars()...)
	ks := filepath.Join(d.dir, "keystore")
	script := []string{"set -e", "ros2 security create_keystore " + ks}
	for _, e := range enclaves {
		script = append(script, "ros2 security create_enclave "+ks+" "+e)
	}
	for e, policy := range policies {
		f := filepath.Join(d.dir, strings.Trim(strings.ReplaceAll(e, "/", "_"), "_")+".policy.xml")
		if err := os.WriteFile(f, []byte(policy), 0o644); err != nil {
			d.t.Fatal(err)
		}
		script = append(script, "ros2 security create_enclave "+ks+" "+e, "ros2 security create_permission "+ks+" "+e+" "+f)
	}
	d.run(env, "bash", "-c", strings.Join(script, "\n"))
	return ks
}

// secure returns env with DDS Security on: the keystore, the strategy and,
// when override is not empty, ROS_SECURITY_ENCLAVE_OVERRIDE.
func secure(env []string, ks, strategy, override string) []string {
	env = append(append([]string(nil), env...),
		"ROS_SECURITY_ENABLE=true", "ROS_SECURITY_STRATEGY="+strategy, "ROS_SECURITY_KEYSTORE="+ks)
	if override != "" {
		env = append(env, "ROS_SECURITY_ENCLAVE_OVERRIDE="+override)
	}
	return env
}

// TestSecurityInterop: on a keystore from `ros2 security`, with
// ROS_SECURITY_STRATEGY=Enforce everywhere, our node (--enclave), our CLI
// (ROS_SECURITY_ENCLAVE_OVERRIDE), rclcpp and rclpy talk both ways.
func TestSecurityInterop(t *testing.T) {
	d := newDom(t)
	secureInterop(t, d, d.keystore(interopEnclaves, nil))
}

// TestSecurityInteropOurKeystore is TestSecurityInterop on a keystore made
// by `fsmnodes security` instead of `ros2 security`.
func TestSecurityInteropOurKeystore(t *testing.T) {
	d := newDom(t)
	secureInterop(t, d, d.ourKeystore(interopEnclaves...))
}

// ourKeystore creates a keystore with `fsmnodes security` for the test's
// domain, with the enclaves (default permissions).
func (d *dom) ourKeystore(enclaves ...string) string {
	d.t.Helper()
	ks := filepath.Join(d.dir, "our_keystore")
	d.fsmnodes("security", "create_keystore", ks)
	for _, e := range enclaves {
		d.fsmnodes("security", "create_enclave", ks, e)
	}
	out := d.fsmnodes("security", "list_enclaves", ks)
	if got, want := strings.Fields(out), sortedCopy(enclaves); strings.Join(got, " ") != strings.Join(want, " ") {
		d.t.Fatalf("fsmnodes security list_enclaves: %v, want %v", got, want)
	}
	return ks
}

func sortedCopy(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}

var interopEnclaves = []string{"/ours_talker", "/ours_server", "/cpp_listener", "/cpp_talker", "/our_cli", "/py_cli"}

func secureInterop(t *testing.T, d *dom, ks string) {
	talker := d.start("ours talker (secure)", secure(d.ours(), ks, "Enforce", ""), ours("gopeer"), "ours_talker", "--ros-args", "--enclave", "/ours_talker")
	talker.waitLine("gopeer ready")
	mustContain(t, "our talker's log", talker.output(), "Found security directory: "+filepath.Join(ks, "enclaves", "ours_talker"))

	// ours -> rclcpp, rclcpp -> ours (our CLI).
	listener := d.start("rclcpp listener (secure)", secure(d.rosEnv(), ks, "Enforce", ""), peerBin(), "listener", "/ours/chatter",
		"--ros-args", "--enclave", "/cpp_listener")
	d.start("rclcpp talker (secure)", secure(d.rosEnv(), ks, "Enforce", ""), peerBin(), "talker", "/cpp/chatter",
		"--ros-args", "--enclave", "/cpp_talker").waitLine("ready")
	listener.waitMatch("heard: ours N", regexp.MustCompile(`^heard: ours \d+$`).MatchString)
	out := d.run(secure(d.ours(), ks, "Enforce", "/our_cli"), ours("fsmnodes"), "topic", "echo", "/cpp/chatter", "std_msgs/msg/String", "--once")
	if !regexp.MustCompile(`data: hello \d+`).MatchString(out) {
		t.Errorf("secure fsmnodes topic echo /cpp/chatter:\n%s", out)
	}

	// ours -> rclpy, rclpy -> ours.
	out = d.run(secure(d.rosEnv(), ks, "Enforce", "/py_cli"), "ros2", "topic", "echo", "--once", "/ours/chatter", "std_msgs/msg/String")
	if !regexp.MustCompile(`data: ours \d+`).MatchString(out) {
		t.Errorf("secure ros2 topic echo /ours/chatter:\n%s", out)
	}
	d.run(secure(d.rosEnv(), ks, "Enforce", "/py_cli"), "ros2", "topic", "pub", "--once", "-w", "1", "/ours/to_ours", "std_msgs/msg/String", "{data: from rclpy}")
	talker.waitLine("got: from rclpy")

	// Actions: our server, goals from our CLI and from rclpy. On a keystore
	// from ros2 security our processes may not use fsmnodes_heartbeat
	// (the permissions grant ROS topics only) and go on without it.
	server := d.start("ours server (secure)", secure(d.ours(), ks, "Enforce", ""), ours("gopeer"), "ours_server", "--ros-args", "--enclave", "/ours_server")
	server.waitLine("gopeer ready")
	out = d.run(secure(d.ours(), ks, "Enforce", "/our_cli"), ours("fsmnodes"), "action", "send_goal", "/ours_server/fibonacci", "example_interfaces/action/Fibonacci", "{order: 3}")
	mustContain(t, "secure fsmnodes action send_goal", out, "Goal accepted", "SUCCEEDED")
	out = d.run(secure(d.rosEnv(), ks, "Enforce", "/py_cli"), "ros2", "action", "send_goal", "/ours_server/fibonacci", "example_interfaces/action/Fibonacci", "{order: 3}")
	mustContain(t, "secure ros2 action send_goal", out, "Goal accepted", "SUCCEEDED")
}

// observerPolicy grants an enclave what an operator's viewer needs and no
// more: it may read every topic and call services, and publish only its
// node's rosout and parameter events. cmd_vel is not granted.
const observerPolicy = `<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0">
  <enclaves>
    <enclave path="/observer">
      <profiles>
        <profile ns="/" node="observer">
          <topics subscribe="ALLOW"><topic>*</topic></topics>
          <topics publish="ALLOW"><topic>rosout</topic><topic>parameter_events</topic></topics>
          <services reply="ALLOW" request="ALLOW"><service>*</service></services>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>
`

// TestSecurityStrangersCannotDrive: a secured robot (diff_drive_sim,
// Enforce) is driven by nobody without credentials (our CLI without keys,
// rclpy's ros2 topic pub without security, a plain Cyclone participant
// writing raw DDS samples) nor by a valid identity without
// a grant to publish cmd_vel (our CLI and rclpy); an insecure rclcpp
// listener hears nothing of a secure talker and our CLI without keys lists
// none of the robot's topics. Then an enclave with the grant drives it: the
// test can fail.
func TestSecurityStrangersCannotDrive(t *testing.T) {
	d := newDom(t)
	ks := d.keystore([]string{"/robot", "/driver", "/ours_talker", "/cpp_listener"}, map[string]string{"/observer": observerPolicy})
	sim := d.start("diff_drive_sim (secure)", secure(d.ours(), ks, "Enforce", ""), ours("diff_drive_sim"),
		"--ros-args", "--enclave", "/robot", "-p", "autostart:=true")
	sim.waitLine("ready")
	talker := d.start("ours talker (secure)", secure(d.ours(), ks, "Enforce", ""), ours("gopeer"), "ours_talker", "--ros-args", "--enclave", "/ours_talker")
	talker.waitLine("gopeer ready")
	odomX := func(who string) float64 {
		t.Helper()
		out := d.run(secure(d.ours(), ks, "Enforce", "/observer"), ours("fsmnodes"), "topic", "echo", "--once", "/odom", "nav_msgs/msg/Odometry", "--field", "pose.pose.position.x")
		x, found := 0.0, false
		for _, line := range strings.Split(out, "\n") {
			if v, err := strconv.ParseFloat(strings.TrimSpace(line), 64); err == nil {
				x, found = v, true
				break
			}
		}
		if !found {
			t.Fatalf("odom x after %s: no number in\n%s", who, out)
		}
		t.Logf("odom x after %s: %.3f m", who, x)
		return x
	}
	twist := "{linear: {x: 0.5}}"

	// No credentials: our CLI without keys sees none of the secure graph
	// and publishes into the void; rclpy without security likewise.
	out := d.run(d.ours(), ours("fsmnodes"), "topic", "list")
	for _, topic := range []string{"/odom", "/cmd_vel", "/ours/chatter", "/scan"} {
		if strings.Contains(out, topic+"\n") {
			t.Errorf("fsmnodes topic list without credentials lists %s:\n%s", topic, out)
		}
	}
	d.run(d.ours(), ours("fsmnodes"), "topic", "pub", "-w", "0", "-t", "20", "-r", "10", "/cmd_vel", "geometry_msgs/msg/Twist", twist)
	d.run(d.rosEnv(), "ros2", "topic", "pub", "-w", "0", "-t", "20", "-r", "10", "/cmd_vel", "geometry_msgs/msg/Twist", twist)
	insecureListener := d.start("rclcpp listener (no security)", d.rosEnv(), peerBin(), "listener", "/ours/chatter")
	insecureListener.waitLine("ready")
	plainCycloneStranger(t, d)

	// A valid identity without the grant: the writer is refused.
	out, err := d.runErr(secure(d.ours(), ks, "Enforce", "/observer"), ours("fsmnodes"), "topic", "pub", "-w", "0", "-t", "20", "-r", "10", "/cmd_vel", "geometry_msgs/msg/Twist", twist)
	if err == nil || !strings.Contains(out, "Not Allowed By Security") {
		t.Errorf("fsmnodes topic pub /cmd_vel as /observer: err %v, want a refusal by security:\n%s", err, out)
	}
	out, err = d.runErr(secure(d.rosEnv(), ks, "Enforce", "/observer"), "ros2", "topic", "pub", "-w", "0", "-t", "20", "-r", "10", "/cmd_vel", "geometry_msgs/msg/Twist", twist)
	if err == nil {
		t.Errorf("ros2 topic pub /cmd_vel as /observer succeeded:\n%s", out)
	}
	// A secure rclcpp listener hears the talker that the insecure one
	// has not heard all along.
	d.start("rclcpp listener (secure)", secure(d.rosEnv(), ks, "Enforce", ""), peerBin(), "listener", "/ours/chatter",
		"--ros-args", "--enclave", "/cpp_listener").waitMatch("heard: ours N", regexp.MustCompile(`^heard: ours \d+$`).MatchString)
	if strings.Contains(insecureListener.output(), "heard:") {
		t.Errorf("an rclcpp listener without security heard the secure talker:\n%s", insecureListener.output())
	}
	if x := odomX("the strangers"); x > 0.01 {
		t.Errorf("the robot moved %.3f m after strangers and an identity without the grant sent cmd_vel", x)
	}

	// The control: the driver's enclave has the grant.
	d.run(secure(d.ours(), ks, "Enforce", "/driver"), ours("fsmnodes"), "topic", "pub", "-w", "1", "-t", "20", "-r", "10", "/cmd_vel", "geometry_msgs/msg/Twist", twist)
	if x := odomX("the driver"); x < 0.2 {
		t.Errorf("the robot moved only %.3f m after the driver's 2 s at 0.5 m/s", x)
	}
}

// TestSecurityRefusals: a tampered permissions.p7s is refused, by our
// processes with an error naming the enclave and the signature failure,
// and by rclcpp; a missing enclave directory or missing files end the
// process with Enforce and leave it insecure with Permissive, for ours as
// for rclpy (rcl's documented strategies).
func TestSecurityRefusals(t *testing.T) {
	d := newDom(t)
	ks := d.keystore([]string{"/tampered", "/partial"}, nil)
	p7s := filepath.Join(ks, "enclaves", "tampered", "permissions.p7s")
	b, err := os.ReadFile(p7s)
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(b), "<default>DENY</default>", "<default>ALLOW</default>", 1)
	if tampered == string(b) {
		t.Fatalf("%s has no <default>DENY</default> to tamper with", p7s)
	}
	if err := os.WriteFile(p7s, []byte(tampered), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ks, "enclaves", "partial", "permissions.p7s"))

	out, err := d.runErr(secure(d.ours(), ks, "Enforce", "/tampered"), ours("fsmnodes"), "topic", "list")
	if err == nil {
		t.Errorf("fsmnodes with a tampered permissions.p7s ran:\n%s", out)
	}
	mustContain(t, "fsmnodes with a tampered permissions.p7s", out, "security: enclave /tampered", "refused", "PKCS7")
	// Permissive does not accept bad files either (only missing ones).
	out, err = d.runErr(secure(d.ours(), ks, "Permissive", "/tampered"), ours("fsmnodes"), "topic", "list")
	if err == nil || !strings.Contains(out, "PKCS7") {
		t.Errorf("fsmnodes with a tampered permissions.p7s, Permissive: err %v\n%s", err, out)
	}
	rclcpp := d.start("rclcpp talker (tampered)", secure(d.rosEnv(), ks, "Enforce", "/tampered"), peerBin(), "talker", "/x")
	if rclcpp.wait() == nil {
		t.Errorf("rclcpp with a tampered permissions.p7s exited 0")
	}
	if strings.Contains(rclcpp.output(), "ready") {
		t.Errorf("rclcpp with a tampered permissions.p7s started:\n%s", rclcpp.output())
	}

	for _, tc := range []struct{ enclave, ourErr string }{
		{"/nope", "does not exist"},
		{"/partial", "missing permissions.p7s"},
	} {
		// Enforce: both refuse to start.
		out, err := d.runErr(secure(d.ours(), ks, "Enforce", tc.enclave), ours("fsmnodes"), "topic", "list")
		if err == nil || !strings.Contains(out, tc.ourErr) {
			t.Errorf("fsmnodes, Enforce, enclave %s: err %v, want %q:\n%s", tc.enclave, err, tc.ourErr, out)
		}
		out, err = d.runErr(secure(d.rosEnv(), ks, "Enforce", tc.enclave), "ros2", "topic", "list", "--no-daemon")
		if err == nil {
			t.Errorf("ros2 topic list, Enforce, enclave %s ran:\n%s", tc.enclave, out)
		}
		// Permissive: both run, without security, and see each other.
		ourNode := d.start("ours talker (permissive "+tc.enclave+")", secure(d.ours(), ks, "Permissive", tc.enclave), ours("gopeer"), "ours_talker",
			"--ros-args", "-r", "__node:=permissive"+strings.ReplaceAll(tc.enclave, "/", "_"))
		ourNode.waitLine("gopeer ready")
		mustContain(t, "our Permissive talker's log", ourNode.output(), "running WITHOUT security")
		out = d.run(secure(d.rosEnv(), ks, "Permissive", tc.enclave), "ros2", "topic", "echo", "--once", "/ours/chatter", "std_msgs/msg/String")
		mustContain(t, "ros2 topic echo, Permissive, enclave "+tc.enclave, out, "data: ours")
		ourNode.stop()
	}
}

// TestSecurityDiscoveryTime prints how long our CLI takes to receive its
// first message from a talker, with DDS Security (authentication handshake,
// key exchange, encrypted discovery) and without: figures, never asserted.
func TestSecurityDiscoveryTime(t *testing.T) {
	d := newDom(t)
	ks := d.keystore([]string{"/ours_talker", "/our_cli"}, nil)
	// Two talkers, one secure and one not, on topics of their own.
	d.start("ours talker (secure)", secure(d.ours(), ks, "Enforce", ""), ours("gopeer"), "ours_talker", "--ros-args", "--enclave", "/ours_talker",
		"-r", "/ours/chatter:=/secure/chatter", "-r", "__node:=secure_talker").waitLine("gopeer ready")
	d.start("ours talker (plain)", d.ours(), ours("gopeer"), "ours_talker").waitLine("gopeer ready")
	measure := func(env []string, topic string) time.Duration {
		start := time.Now()
		out := d.run(env, ours("fsmnodes"), "topic", "echo", "--once", topic, "std_msgs/msg/String")
		if !strings.Contains(out, "data: ours") {
			t.Fatalf("echo %s:\n%s", topic, out)
		}
		return time.Since(start)
	}
	var plain, sec []time.Duration
	for i := 0; i < 3; i++ {
		plain = append(plain, measure(d.ours(), "/ours/chatter"))
		sec = append(sec, measure(secure(d.ours(), ks, "Enforce", "/our_cli"), "/secure/chatter"))
	}
	t.Logf("fsmnodes topic echo --once, start to first message (%s peer suite): without security %v, with SROS2 (Enforce) %v",
		peer.distro, plain, sec)
}

// TestSecurityGeneratePolicy: `fsmnodes security generate_policy` writes a
// policy of the running graph (our talker, an rclcpp listener) that real
// sros2 accepts (`ros2 security create_permission` checks it against its
// schema); with those narrowed permissions the talker still reaches the
// listener, and publishing anything else is refused.
func TestSecurityGeneratePolicy(t *testing.T) {
	d := newDom(t)
	ks := d.ourKeystore("/ours_talker", "/cpp_listener", "/our_cli")
	talker := d.start("ours talker (secure)", secure(d.ours(), ks, "Enforce", ""), ours("gopeer"), "ours_talker", "--ros-args", "--enclave", "/ours_talker")
	talker.waitLine("gopeer ready")
	listener := d.start("rclcpp listener (secure)", secure(d.rosEnv(), ks, "Enforce", ""), peerBin(), "listener", "/ours/chatter",
		"--ros-args", "--enclave", "/cpp_listener")
	listener.waitMatch("heard: ours N", regexp.MustCompile(`^heard: ours \d+$`).MatchString)

	policy := filepath.Join(d.dir, "policy.xml")
	d.run(secure(d.ours(), ks, "Enforce", "/our_cli"), ours("fsmnodes"), "security", "generate_policy", policy)
	b, err := os.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "generated policy", string(b), `<enclave path="/ours_talker">`, `node="ours_talker"`, "<topic>/ours/chatter</topic>",
		`<enclave path="/cpp_listener">`, `node="listener"`)

	// Real sros2 validates the policy and makes the talker's permissions
	// from it; our CLI makes the listener's.
	env, err := sros2Env()
	if err != nil {
		t.Skipf("no ros2 security: %v", err)
	}
	env = append(append([]string(nil), env...), d.vars()...)
	d.run(env, "ros2", "security", "create_permission", ks, "/ours_talker", policy)
	d.fsmnodes("security", "create_permission", ks, "/cpp_listener", policy)
	// The same nodes again (the private names of their parameter services
	// are in the policy: another node name would be refused).
	talker.stop()
	listener.stop()
	talker = d.start("ours talker (generated permissions)", secure(d.ours(), ks, "Enforce", ""), ours("gopeer"), "ours_talker",
		"--ros-args", "--enclave", "/ours_talker")
	talker.waitLine("gopeer ready")
	d.start("rclcpp listener (generated permissions)", secure(d.rosEnv(), ks, "Enforce", ""), peerBin(), "listener", "/ours/chatter",
		"--ros-args", "--enclave", "/cpp_listener").waitMatch("heard: ours N", regexp.MustCompile(`^heard: ours \d+$`).MatchString)
	out, err := d.runErr(secure(d.ours(), ks, "Enforce", "/ours_talker"), ours("fsmnodes"), "topic", "pub", "-w", "0", "--once", "/cmd_vel", "geometry_msgs/msg/Twist", "{}")
	if err == nil || !strings.Contains(out, "Not Allowed By Security") {
		t.Errorf("publishing /cmd_vel with the talker's generated permissions: err %v\n%s", err, out)
	}
}

// secureContext is d.context with DDS Security on, as enclave, in keystore
// ks (Enforce), or without it when ks is empty; stop closes it (also done
// at the end of the test). Cyclone DDS cannot have secure and insecure
// participants of one domain in one process: close one before the other.
func (d *dom) secureContext(ks, enclave string) (c *ros.Context, stop func()) {
	d.t.Helper()
	vars := map[string]string{"ROS_DISTRO": peer.distro}
	if ks != "" {
		vars = map[string]string{"ROS_DISTRO": peer.distro, "ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_STRATEGY": "Enforce",
			"ROS_SECURITY_KEYSTORE": ks, "ROS_SECURITY_ENCLAVE_OVERRIDE": enclave}
	}
	for _, kv := range d.net {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	id := d.id
	c, err := ros.NewContext(ros.ContextOptions{DomainID: &id, Getenv: func(k string) string { return vars[k] },
		NoSignals: true, LogOutput: testenv.LogWriter{T: d.t, Prefix: "[test] "}})
	if err != nil {
		d.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Spin(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			c.Close()
		})
	}
	d.t.Cleanup(stop)
	return c, stop
}

// TestSecureDemo: `ros2 launch fsmnodes demo.launch.xml security:=true`
// makes its keystore under $ROS_HOME (fsmnodes security demo_keystore,
// through $(command ...)), every node starts secured in its own enclave,
// the /operator enclave sees all the demo's nodes, and a process without
// credentials sees none of them. Printed: the time from the launch to
// every demo node in the graph, insecure then secure (never asserted).
func TestSecureDemo(t *testing.T) {
	d := newDom(t)
	if peer.colconErr != nil {
		t.Fatal(peer.colconErr)
	}
	env, err := sourceEnv(d.rosEnv(), filepath.Join(peer.ws, "install", "setup.bash"))
	if err != nil {
		t.Fatal(err)
	}
	// The insecure demo first, for the figure.
	start := time.Now()
	launch := d.start("ros2 launch", env, append([]string{"ros2", "launch", "fsmnodes", "demo.launch.xml", "foxglove_port:=0"}, testenv.DemoVelmaArgs()...)...)
	c, stop := d.secureContext("", "")
	waitGraph(t, c, "the demo's nodes", func() bool { return hasNodes(c, demoNodes...) })
	insecure := time.Since(start)
	stop()
	launch.stop()

	start = time.Now()
	launch = d.start("ros2 launch (security:=true)", env, append([]string{"ros2", "launch", "fsmnodes", "demo.launch.xml", "foxglove_port:=0", "security:=true"}, testenv.DemoVelmaArgs()...)...)
	ks := filepath.Join(d.dir, "ros_home", "fsmnodes_keystore", fmt.Sprintf("domain_%d", d.id))
	testenv.WaitFor(t, deadline, "the demo's keystore", func() bool {
		_, err := os.Stat(filepath.Join(ks, "enclaves", "operator", "permissions.p7s"))
		return err == nil
	})
	sc, _ := d.secureContext(ks, "/operator")
	waitGraph(t, sc, "the secure demo's nodes", func() bool { return hasNodes(sc, demoNodes...) })
	secured := time.Since(start)
	for _, n := range demoNodes {
		mustContain(t, "the secure demo's log", launch.output(), "Found security directory: "+filepath.Join(ks, "enclaves")+n)
	}
	out := d.run(d.ours(), ours("fsmnodes"), "node", "list")
	for _, n := range demoNodes {
		if strings.Contains(out, n) {
			t.Errorf("fsmnodes node list without credentials lists %s of the secure demo:\n%s", n, out)
		}
	}
	t.Logf("ros2 launch demo.launch.xml to all %d demo nodes in the graph (%s suite): insecure %v, security:=true %v (keystore made on first use)",
		len(demoNodes), peer.distro, insecure.Round(time.Millisecond), secured.Round(time.Millisecond))
}

// plainCycloneStranger is a plain Cyclone DDS participant without
// credentials in the test process (below the ROS layer: raw CDR on the DDS
// topic rt/cmd_vel, as any DDS program can write it): for 2 s it writes
// Twist samples of 0.5 m/s, and it must learn no node, reader or writer of
// the secured processes in discovery.
func plainCycloneStranger(t *testing.T, d *dom) {
	t.Helper()
	c, stop := d.secureContext("", "")
	defer stop()
	topic, err := c.Participant().Topic("rt/cmd_vel", "geometry_msgs::msg::dds_::Twist_")
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Participant().NewWriter(topic, dds.QoS{})
	if err != nil {
		t.Fatal(err)
	}
	sample := []byte{0, 1, 0, 0} // CDR little endian, then linear x, y, z, angular x, y, z
	sample = binary.LittleEndian.AppendUint64(sample, math.Float64bits(0.5))
	sample = append(sample, make([]byte, 5*8)...)
	for i := 0; i < 20; i++ {
		if err := w.Write(sample); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// DDS Security leaves the participant announcements (SPDP) in clear,
	// so that peers can start the handshake: a stranger learns that the
	// secured participants exist and their USER_DATA (the enclave name),
	// but none of their nodes, readers, writers or data.
	secured := 0
	for _, p := range c.Participants() {
		if p.Self || p.Enclave == "/" {
			continue
		}
		secured++
		if len(p.Nodes) > 0 || p.Endpoints > 0 {
			t.Errorf("a plain Cyclone participant learned about the secured participant %v (enclave %s): nodes %v, %d endpoints", p.GUID, p.Enclave, p.Nodes, p.Endpoints)
		}
	}
	t.Logf("the plain participant saw %d participants, %d of them secured (their announcements and enclave names only)", len(c.Participants()), secured)
}
