// Package interop tests internal/ros against an independent DDS peer: a
// small C program (testdata/peer.c) written against the plain Cyclone DDS C
// API, with type descriptors that Cyclone's own IDL compiler idlc generates
// at test time from testdata/ros_types.idl (the IDL rosidl would emit for
// the ROS types, with rmw_cyclonedds_cpp's dds_ name mangling). The peer
// shares no code with internal/ros, internal/dds or msgs, so a sample that
// crosses in either direction with every bit intact shows that our topic
// names, type names, QoS, data representation and CDR layout agree with
// Cyclone's C serializer. The peer also reports how it discovered our
// endpoints and, for samples we send, the exact bytes next to Cyclone's own
// serialization of the same value.
//
// The tests need idlc, gcc and the Cyclone headers and library; without
// them they are skipped. They run for the Jazzy and Humble dialects on
// domains from testenv.Domain with loopback-only discovery on both sides. Timeouts
// are failure deadlines only.
package interop

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// deadline bounds every wait; reaching it is a failure, never a result.
const deadline = 25 * time.Second

// ROS topics of the peer (DDS topics rt/interop/...).
const (
	topicString = "/interop/chatter"
	topicTwist  = "/interop/cmd_vel"
	topicJoint  = "/interop/joint_states"
)

// dialect is one ROS distribution's setup of both sides.
type dialect struct {
	name string
	// rosEnv is the ROS environment of the Go side (besides the domain).
	rosEnv map[string]string
	// cycloneURI is CYCLONEDDS_URI of the C peer: the configuration
	// rmw_cyclonedds_cpp (and internal/ros) derive from rosEnv with an
	// empty CYCLONEDDS_URI, so both sides discover each other the same way.
	cycloneURI string
	// typeHash says whether endpoints carry USER_DATA "typehash=...;".
	typeHash bool
}

var dialects = []dialect{
	{
		name:   "jazzy",
		rosEnv: map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"},
		cycloneURI: `<CycloneDDS><Domain>` +
			`<General><AllowMulticast>false</AllowMulticast></General>` +
			`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>` +
			`<Peers><Peer address="localhost"/></Peers></Discovery>` +
			`</Domain></CycloneDDS>,`,
		typeHash: true,
	},
	{
		name:   "humble",
		rosEnv: map[string]string{"ROS_DISTRO": "humble", "ROS_LOCALHOST_ONLY": "1"},
		cycloneURI: `<CycloneDDS><Domain><General><Interfaces>` +
			`<NetworkInterface address="127.0.0.1"/>` +
			`</Interfaces></General></Domain></CycloneDDS>,`,
		typeHash: false,
	},
}

// ---- test values ----

// nanPayload is a quiet NaN with a non-zero payload: any conversion
// through arithmetic or a float32 would change its bits.
var nanPayload = math.Float64frombits(0x7ff8_0000_dead_beef)

func stringValues() []*std_msgs_msg.String {
	return []*std_msgs_msg.String{
		{Data: ""},
		{Data: "hello world"},
		{Data: "héllo wörld — ĉu ŝi? 日本語 🤖"},
		{Data: "tab\tnewline\nquote\" backslash\\ del\x7f high\u00ff"},
		{Data: "a"},
		// Larger than a UDP datagram: sent as DATA_FRAG.
		{Data: strings.Repeat("ab€", 40000)},
		{Data: "last"},
	}
}

func vec(x, y, z float64) geometry_msgs_msg.Vector3 {
	return geometry_msgs_msg.Vector3{X: x, Y: y, Z: z}
}

func twistValues() []*geometry_msgs_msg.Twist {
	negZero := math.Copysign(0, -1)
	return []*geometry_msgs_msg.Twist{
		{},
		{Linear: vec(1.5, -2.25, 3e-300), Angular: vec(math.Pi, -math.E, 1e300)},
		{Linear: vec(negZero, math.SmallestNonzeroFloat64, -math.MaxFloat64), Angular: vec(math.Inf(1), math.Inf(-1), nanPayload)},
		{Linear: vec(0.1, 0.2, 0.30000000000000004), Angular: vec(-1, 1, 123456789.123456789)},
	}
}

func jointValues() []*sensor_msgs_msg.JointState {
	big := &sensor_msgs_msg.JointState{}
	big.Header.FrameId = "base_link"
	for i := 0; i < 1500; i++ {
		big.Name = append(big.Name, fmt.Sprintf("joint_%d_%s", i, strings.Repeat("x", i%7)))
		big.Position = append(big.Position, float64(i)*0.001-0.5)
	}
	big.Effort = []float64{math.MaxFloat64}
	stamp := func(sec int32, nsec uint32) builtin_interfaces_msg.Time {
		return builtin_interfaces_msg.Time{Sec: sec, Nanosec: nsec}
	}
	return []*sensor_msgs_msg.JointState{
		// Everything empty.
		{},
		// frame_id lengths 1..7 move the sequences through every padding.
		{Header: std_msgs_msg.Header{Stamp: stamp(1, 2), FrameId: "a"}, Name: []string{"j"}, Position: []float64{1}, Effort: []float64{-2}},
		{Header: std_msgs_msg.Header{Stamp: stamp(math.MinInt32, 999999999), FrameId: "ab"}, Name: []string{"", "b", "cd"}, Velocity: []float64{0.5, math.Copysign(0, -1), nanPayload}},
		{Header: std_msgs_msg.Header{Stamp: stamp(math.MaxInt32, 0), FrameId: "abc"}, Name: []string{"épaule", "коленo"}, Position: []float64{math.Inf(-1), 2}, Velocity: []float64{3}, Effort: []float64{}},
		{Header: std_msgs_msg.Header{Stamp: stamp(-1, math.MaxUint32), FrameId: "abcd"}, Position: []float64{1, 2, 3}},
		{Header: std_msgs_msg.Header{Stamp: stamp(1700000000, 123456789), FrameId: "abcde"}, Name: []string{"abc"}, Velocity: []float64{math.SmallestNonzeroFloat64}},
		{Header: std_msgs_msg.Header{FrameId: "abcdef"}, Name: []string{"ab", "abc", "abcd"}, Position: []float64{1}, Velocity: []float64{2}, Effort: []float64{3}},
		{Header: std_msgs_msg.Header{FrameId: "日本"}, Effort: []float64{4, 5}},
		big,
	}
}

// ---- line format (see testdata/peer.c) ----

func putStr(b *strings.Builder, s string) {
	b.WriteString(" x")
	b.WriteString(hex.EncodeToString([]byte(s)))
}

func putDoubles(b *strings.Builder, v []float64) {
	fmt.Fprintf(b, " %d", len(v))
	for _, d := range v {
		fmt.Fprintf(b, " %016x", math.Float64bits(d))
	}
}

func lineString(m *std_msgs_msg.String) string {
	var b strings.Builder
	b.WriteString("string")
	putStr(&b, m.Data)
	return b.String()
}

func lineTwist(m *geometry_msgs_msg.Twist) string {
	var b strings.Builder
	b.WriteString("twist")
	for _, d := range []float64{m.Linear.X, m.Linear.Y, m.Linear.Z, m.Angular.X, m.Angular.Y, m.Angular.Z} {
		fmt.Fprintf(&b, " %016x", math.Float64bits(d))
	}
	return b.String()
}

func lineJoint(m *sensor_msgs_msg.JointState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "joint %d %d", m.Header.Stamp.Sec, m.Header.Stamp.Nanosec)
	putStr(&b, m.Header.FrameId)
	fmt.Fprintf(&b, " %d", len(m.Name))
	for _, n := range m.Name {
		putStr(&b, n)
	}
	putDoubles(&b, m.Position)
	putDoubles(&b, m.Velocity)
	putDoubles(&b, m.Effort)
	return b.String()
}

// kindOf returns the sample kind (first token) of a peer line.
func kindOf(line string) string {
	k, _, _ := strings.Cut(line, " ")
	return k
}

// expected returns the lines of all test values, by kind.
func expected() map[string][]string {
	want := map[string][]string{}
	for _, m := range stringValues() {
		want["string"] = append(want["string"], lineString(m))
	}
	for _, m := range twistValues() {
		want["twist"] = append(want["twist"], lineTwist(m))
	}
	for _, m := range jointValues() {
		want["joint"] = append(want["joint"], lineJoint(m))
	}
	return want
}

// compareLines reports every difference between the lines received and
// those expected, per kind and in order.
func compareLines(t *testing.T, dir string, got, want map[string][]string) {
	t.Helper()
	for _, kind := range []string{"string", "twist", "joint"} {
		g, w := got[kind], want[kind]
		if len(g) != len(w) {
			t.Errorf("%s: %s: received %d samples, want %d", dir, kind, len(g), len(w))
		}
		for i := 0; i < len(g) && i < len(w); i++ {
			if g[i] != w[i] {
				t.Errorf("%s: %s sample %d differs:\n got  %s\n want %s", dir, kind, i, abbrev(g[i]), abbrev(w[i]))
			}
		}
	}
}

// abbrev shortens a line for a failure message.
func abbrev(s string) string {
	if len(s) > 400 {
		return s[:400] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// endpointLines are the "endpoint" lines the peer prints for our matched
// writers or readers: rt/ topic names, the dds_-mangled type names, the
// USER_DATA "typehash=RIHS01_...;" of rmw_cyclonedds_cpp on Jazzy (empty on
// Humble), reliable, volatile, and XCDR1 as the only data representation.
func endpointLines(typeHash bool) []string {
	ep := func(topic, typeName, hash string) string {
		userData := ""
		if typeHash {
			userData = "typehash=" + hash + ";"
		}
		return fmt.Sprintf("endpoint rt%s %s x%s reliable volatile xcdr1",
			topic, typeName, hex.EncodeToString([]byte(userData)))
	}
	return []string{
		ep(topicString, "std_msgs::msg::dds_::String_", "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"),
		ep(topicTwist, "geometry_msgs::msg::dds_::Twist_", "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a"),
		ep(topicJoint, "sensor_msgs::msg::dds_::JointState_", sensor_msgs_msg.JointState_TypeInfo.Hash),
	}
}

// checkEndpoints reads the peer's "matched" line and its endpoint lines and
// compares them with endpointLines.
func checkEndpoints(t *testing.T, p *peer, dir string, typeHash bool) {
	t.Helper()
	if l := p.next(t, `"matched"`); l != "matched" {
		t.Fatalf("peer said %q, want matched", abbrev(l))
	}
	for _, want := range endpointLines(typeHash) {
		if got := p.next(t, "an endpoint line"); got != want {
			t.Errorf("%s: the peer discovered our endpoint as\n %s\nwant\n %s", dir, got, want)
		}
	}
}

// ---- the C peer ----

// buildPeer generates C from the IDL with idlc and compiles the peer into
// dir; it skips the test when the tools are missing.
func buildPeer(t *testing.T, dir string) string {
	t.Helper()
	idlc, err := exec.LookPath("idlc")
	if err != nil {
		t.Skip("idlc (Cyclone DDS IDL compiler, package cyclonedds-tools) not found: interop test skipped")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: interop test skipped")
	}
	if _, err := os.Stat("/usr/include/dds/dds.h"); err != nil {
		t.Skip("Cyclone DDS headers not found in /usr/include/dds (package cyclonedds-dev): interop test skipped")
	}
	idl, err := filepath.Abs(filepath.Join("testdata", "ros_types.idl"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", "peer.c"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(idlc, "-o", dir, idl)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("idlc %s: %v\n%s", idl, err, out)
	}
	bin := filepath.Join(dir, "peer")
	cmd = exec.Command(gcc, "-std=gnu11", "-Wall", "-O1", "-I", dir, "-o", bin,
		src, filepath.Join(dir, "ros_types.c"), "-lddsc")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gcc peer: %v\n%s", err, out)
	}
	if len(out) > 0 {
		t.Logf("gcc peer:\n%s", out)
	}
	return bin
}

// peer is a running C peer.
type peer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // stdout, closed at EOF
	done  chan struct{}
	err   error
}

// startPeer runs the peer with args on domain, with CYCLONEDDS_URI uri and
// nothing else from the ROS environment.
func startPeer(t *testing.T, bin string, domain uint32, uri string, args ...string) *peer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{args[0], strconv.Itoa(int(domain))}, args[1:]...)...)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "ROS_") && k != "CYCLONEDDS_URI" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CYCLONEDDS_URI="+uri)
	cmd.Stderr = testenv.LogWriter{T: t, Prefix: fmt.Sprintf("[peer %s] ", args[0])}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start peer: %v", err)
	}
	// The buffer holds far more lines than any test expects, so the
	// reader never blocks the peer.
	p := &peer{cmd: cmd, stdin: stdin, lines: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	return p
}

// stop ends the peer at the end of a test. On success it has already
// exited; after a failure it is closed or killed rather than left waiting
// for samples until its own timeout.
func (p *peer) stop() {
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// wait waits for the peer to exit by itself and returns its exit error.
func (p *peer) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(deadline):
		t.Fatalf("timeout waiting for the peer to exit")
	}
	return nil
}

// next returns the next stdout line of the peer; it fails the test at EOF
// or after the deadline.
func (p *peer) next(t *testing.T, what string) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatalf("peer exited while waiting for %s", what)
		}
		return l
	case <-time.After(deadline):
		t.Fatalf("timeout waiting for %s from the peer", what)
	}
	return ""
}

// ---- the Go side ----

// newContext creates a spinning Context on domain with the ROS environment
// rosEnv (nothing is read from the real one); it is closed at the end of
// the test.
func newContext(t *testing.T, domain uint32, rosEnv map[string]string) *ros.Context {
	t.Helper()
	getenv := func(k string) string { return rosEnv[k] }
	c, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, Getenv: getenv, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "[ros] "}})
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Spin(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// waitCount polls count until it reports at least one match.
func waitCount(t *testing.T, what string, count func() (int, error)) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		n, err := count()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("timeout waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ---- tests ----

// TestInterop builds the C peer once and runs both directions for each
// dialect in parallel, each on its own domain.
func TestInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("interop test skipped with -short")
	}
	bin := buildPeer(t, t.TempDir())
	for _, d := range dialects {
		t.Run(d.name+"/GoToC", func(t *testing.T) {
			t.Parallel()
			testGoToC(t, bin, d)
		})
		t.Run(d.name+"/CToGo", func(t *testing.T) {
			t.Parallel()
			testCToGo(t, bin, d)
		})
	}
}

// testGoToC publishes every test value with ros.Publisher and checks that
// the C subscriber decodes exactly the same values.
func testGoToC(t *testing.T, bin string, d dialect) {
	strs, twists, joints := stringValues(), twistValues(), jointValues()
	domain := testenv.Domain(t)
	p := startPeer(t, bin, domain, d.cycloneURI, "sub",
		strconv.Itoa(len(strs)), strconv.Itoa(len(twists)), strconv.Itoa(len(joints)))

	c := newContext(t, domain, d.rosEnv)
	n, err := c.NewNode("interop_talker", "")
	if err != nil {
		t.Fatalf("NewNode: %v", err)
	}
	ps, err := ros.NewPublisher[std_msgs_msg.String](n, topicString, ros.QoSDefault)
	if err != nil {
		t.Fatalf("NewPublisher String: %v", err)
	}
	pt, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, topicTwist, ros.QoSDefault)
	if err != nil {
		t.Fatalf("NewPublisher Twist: %v", err)
	}
	pj, err := ros.NewPublisher[sensor_msgs_msg.JointState](n, topicJoint, ros.QoSDefault)
	if err != nil {
		t.Fatalf("NewPublisher JointState: %v", err)
	}

	// Both ends must have matched before the first sample: a volatile
	// reader that has not yet seen the writer would miss it.
	checkEndpoints(t, p, "Go -> C", d.typeHash)
	waitCount(t, "the C reader of "+topicString, ps.SubscriptionCount)
	waitCount(t, "the C reader of "+topicTwist, pt.SubscriptionCount)
	waitCount(t, "the C reader of "+topicJoint, pj.SubscriptionCount)

	for i, m := range strs {
		if err := ps.Publish(m); err != nil {
			t.Fatalf("Publish String %d: %v", i, err)
		}
	}
	for i, m := range twists {
		if err := pt.Publish(m); err != nil {
			t.Fatalf("Publish Twist %d: %v", i, err)
		}
	}
	for i, m := range joints {
		if err := pj.Publish(m); err != nil {
			t.Fatalf("Publish JointState %d: %v", i, err)
		}
	}

	// Each sample comes as a value line and a "cdr" line.
	got := map[string][]string{}
	total := 2 * (len(strs) + len(twists) + len(joints))
	for i := 0; i < total; i++ {
		l := p.next(t, fmt.Sprintf("sample %d of %d", i+1, total))
		got[kindOf(l)] = append(got[kindOf(l)], l)
	}
	if err := p.wait(t); err != nil {
		t.Errorf("peer: %v", err)
	}
	compareLines(t, "Go -> C", got, expected())
	compareCDR(t, got["cdr"], total/2)
}

// compareCDR checks the peer's "cdr" lines: the bytes we sent must be
// exactly those Cyclone's C serializer makes of the same value (padding
// bytes and length included), except for the encapsulation options.
// rmw_cyclonedds_cpp writes the header 00 01 00 00 (CDR_LE, options zero)
// and pads the sample with zeros to a multiple of 4; Cyclone's own
// serializer additionally records that trailing padding count in the low
// bits of the options (XTypes 7.6.3.1.2), which receivers ignore for
// XCDR1. So our header must be exactly 00 01 00 00 and only theirs may
// carry padding bits.
func compareCDR(t *testing.T, lines []string, want int) {
	t.Helper()
	if len(lines) != want {
		t.Errorf("Go -> C: %d serialized samples, want %d", len(lines), want)
	}
	n := map[string]int{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 4 {
			t.Errorf("Go -> C: bad cdr line %q", abbrev(l))
			continue
		}
		kind, ours, theirs := f[1], f[2], f[3]
		if len(ours) < 8 || ours[:8] != "00010000" {
			t.Errorf("Go -> C: %s sample %d: encapsulation header %.8s, want 00010000 (CDR_LE, options 0, as rmw_cyclonedds_cpp)", kind, n[kind], ours)
		}
		if len(theirs) < 8 || theirs[:4] != "0001" {
			t.Errorf("Go -> C: %s sample %d: Cyclone's encapsulation header is %.8s, want CDR_LE 0001....", kind, n[kind], theirs)
		}
		// Compare from the options on, with the options made equal.
		if len(ours) >= 8 && len(theirs) >= 8 {
			ours, theirs = ours[8:], theirs[8:]
		}
		if ours != theirs {
			i := 0
			for i < len(ours) && i < len(theirs) && ours[i] == theirs[i] {
				i++
			}
			i &^= 1
			t.Errorf("Go -> C: %s sample %d: our serialization (%d bytes after the header) differs from Cyclone's (%d bytes) at byte %d:\n ours   %s\n theirs %s",
				kind, n[kind], len(ours)/2, len(theirs)/2, 4+i/2, abbrev(ours[max(0, i-32):]), abbrev(theirs[max(0, i-32):]))
		}
		n[kind]++
	}
}

// testCToGo has the C publisher send every test value and checks that
// ros.Subscription decodes exactly the same values.
func testCToGo(t *testing.T, bin string, d dialect) {
	domain := testenv.Domain(t)
	c := newContext(t, domain, d.rosEnv)
	n, err := c.NewNode("interop_listener", "")
	if err != nil {
		t.Fatalf("NewNode: %v", err)
	}
	// The callbacks run on the node's goroutine; they only send lines.
	lines := make(chan string, 1024)
	ss, err := ros.NewSubscription(n, topicString, ros.QoSDefault, func(m *std_msgs_msg.String) { lines <- lineString(m) })
	if err != nil {
		t.Fatalf("NewSubscription String: %v", err)
	}
	st, err := ros.NewSubscription(n, topicTwist, ros.QoSDefault, func(m *geometry_msgs_msg.Twist) { lines <- lineTwist(m) })
	if err != nil {
		t.Fatalf("NewSubscription Twist: %v", err)
	}
	sj, err := ros.NewSubscription(n, topicJoint, ros.QoSDefault, func(m *sensor_msgs_msg.JointState) { lines <- lineJoint(m) })
	if err != nil {
		t.Fatalf("NewSubscription JointState: %v", err)
	}

	p := startPeer(t, bin, domain, d.cycloneURI, "pub")
	checkEndpoints(t, p, "C -> Go", d.typeHash)
	waitCount(t, "the C writer of "+topicString, ss.PublisherCount)
	waitCount(t, "the C writer of "+topicTwist, st.PublisherCount)
	waitCount(t, "the C writer of "+topicJoint, sj.PublisherCount)

	want := expected()
	var input strings.Builder
	total := 0
	for _, kind := range []string{"string", "twist", "joint"} {
		for _, l := range want[kind] {
			input.WriteString(l)
			input.WriteByte('\n')
			total++
		}
	}
	go func() {
		// The peer reads while it publishes; a write error shows up as a
		// missing "sent" line below.
		io.WriteString(p.stdin, input.String())
		p.stdin.Close()
	}()
	if l, w := p.next(t, `"sent"`), fmt.Sprintf("sent %d", total); l != w {
		t.Fatalf("peer said %q, want %q", abbrev(l), w)
	}
	if err := p.wait(t); err != nil {
		t.Errorf("peer: %v", err)
	}

	// Every sample was acknowledged by our reader before the peer said
	// "sent", so all of them are on their way to the callbacks.
	got := map[string][]string{}
	for i := 0; i < total; i++ {
		select {
		case l := <-lines:
			got[kindOf(l)] = append(got[kindOf(l)], l)
		case <-time.After(deadline):
			t.Fatalf("timeout: received %d of %d samples", i, total)
		}
	}
	for _, s := range []*ros.Subscription{ss, st, sj} {
		if m, d := s.Malformed(), s.Dropped(); m != 0 || d != 0 {
			t.Errorf("%s: %d malformed and %d dropped samples", s.TopicName(), m, d)
		}
	}
	compareLines(t, "C -> Go", got, want)
}
