package multihost

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/joy"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// teleopIdle and muxCycle are the robot's own timers in
// launch/rsm_sim.launch.xml (params/rsm.yaml): the mux's
// teleoperation_idle_timer and its 20 Hz cycle. A link that drops while
// the operator drives must stop the robot within their sum.
const (
	teleopIdle = 500 * time.Millisecond
	muxCycle   = 50 * time.Millisecond
)

// safeLimit bounds the wait for the robot to stop: well below Cyclone's
// 10 s participant lease, so a pass shows that safety does not wait for
// the lease. It is a failure bound; the figure is logged.
const safeLimit = 5 * time.Second

// sample is one line of an mhprobe observer: when it arrived and the
// command (linear.x, angular.z).
type sample struct {
	at   time.Time
	x, z float64
}

// samples parses the lines of kind ("twist", "odom") the probe p printed.
func samples(p *testenv.Process, kind string) []sample {
	var out []sample
	for _, line := range strings.Split(p.Output(), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != kind {
			continue
		}
		ns, err1 := strconv.ParseInt(f[1], 10, 64)
		x, err2 := strconv.ParseFloat(f[2], 64)
		z, err3 := strconv.ParseFloat(f[3], 64)
		if err1 == nil && err2 == nil && err3 == nil {
			out = append(out, sample{time.Unix(0, ns), x, z})
		}
	}
	return out
}

// firstAfter waits until p has printed a sample of kind after t that
// satisfies cond, and returns it.
func firstAfter(tb *testing.T, p *testenv.Process, kind string, t time.Time, limit time.Duration, what string, cond func(sample) bool) sample {
	tb.Helper()
	var got sample
	testenv.WaitFor(tb, limit, what, func() bool {
		for _, s := range samples(p, kind) {
			if s.at.After(t) && cond(s) {
				got = s
				return true
			}
		}
		p.MustRun(tb)
		return false
	})
	return got
}

// rate is the number of samples per second in [from, to), and the
// longest time without one.
func rate(ss []sample, from, to time.Time) (hz float64, maxGap time.Duration) {
	var n int
	last := from
	for _, s := range ss {
		if s.at.Before(from) || !s.at.Before(to) {
			continue
		}
		n++
		if g := s.at.Sub(last); g > maxGap {
			maxGap = g
		}
		last = s.at
	}
	if g := to.Sub(last); g > maxGap {
		maxGap = g
	}
	return float64(n) / to.Sub(from).Seconds(), maxGap
}

// turning is the joy_teleop command for the enable button held with the
// stick full left (teleop_twist_joy's defaults): 0.5 rad/s on the spot, so
// the robot never drives into a wall of the simulated world, where its
// odometry would stand still for another reason.
const turning = 0.5

func isDriving(s sample) bool { return s.x == 0 && s.z == turning }
func isZero(s sample) bool    { return s.x == 0 && s.z == 0 }

// robotSystem is the robot host running the diffbot of the demo
// (launch/rsm_sim.launch.xml) with observers of the mux's output and the
// simulator's odometry, and the operator host running the joystick driver
// on a FIFO and joy_teleop.
type robotSystem struct {
	net         *Net
	robot, op   *Host
	cmd, odom   *testenv.Process // observers on the robot
	js          *os.File         // the operator's joystick device
	bin, probe  string
	root        string
	robotEnv    []string
	operatorEnv []string
}

func startRobotSystem(t *testing.T, robotVars, operatorVars []string) *robotSystem {
	t.Helper()
	testenv.Heavy(t) // the diffbot's RSM system on the robot
	s := &robotSystem{net: NewNet(t, "robot", "operator")}
	s.robot, s.op = s.net.Host("robot"), s.net.Host("operator")
	domain := testenv.Domain(t)
	s.bin = testenv.ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
	s.probe = testenv.Executable(t, "test/multihost/mhprobe")
	var err error
	if s.root, err = testenv.ModuleRoot(); err != nil {
		t.Fatal(err)
	}
	s.robotEnv, s.operatorEnv = s.robot.Env(domain, robotVars...), s.op.Env(domain, operatorVars...)
	s.robot.Start(t, "rsm_sim", s.robotEnv, filepath.Join(s.bin, "fsmnodes"), "launch",
		filepath.Join(s.root, "launch/rsm_sim.launch.xml"), "--bin-dir", s.bin, "--share-dir", s.root)
	s.cmd = s.robot.Start(t, "cmd_vel-observer", s.robotEnv, s.probe, "twist", "/cmd_vel")
	s.odom = s.robot.Start(t, "odom-observer", s.robotEnv, s.probe, "odom", "/odom")

	fifo := filepath.Join(t.TempDir(), "js0")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR never blocks on a FIFO and keeps it open for the reader.
	if s.js, err = os.OpenFile(fifo, os.O_RDWR, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.js.Close() })
	s.op.Start(t, "joy", s.operatorEnv, filepath.Join(s.bin, "joy"), "--ros-args", "-p", "dev:="+fifo)
	s.op.Start(t, "joy_teleop", s.operatorEnv, filepath.Join(s.bin, "joy_teleop"))
	return s
}

// hold presses the enable button and pushes the stick full left; the
// joy driver repeats the state at 20 Hz (autorepeat_rate) while it is held.
func (s *robotSystem) hold(t *testing.T) {
	for _, e := range []joy.Event{
		{TimeMs: 1, Type: joy.EventButton, Number: 0, Value: 1},
		{TimeMs: 1, Type: joy.EventAxis, Number: 0, Value: -32767},
	} {
		if _, err := s.js.Write(e.Encode()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTeleopLinkFaults drives the robot from the operator station with the
// joystick and breaks the link between them: the robot must stop within
// the mux's teleoperation_idle_timer plus one cycle whatever DDS's lease
// says, and the operator must drive again when the link is back, with
// nothing restarted. Then the link is slowed to 1 Mbit/s while the
// operator streams the map and the scans: the robot's loops keep their
// rate. Times are logged as figures.
func TestTeleopLinkFaults(t *testing.T) {
	needNetns(t)
	t.Parallel()
	s := startRobotSystem(t, nil, nil)
	s.hold(t)
	first := firstAfter(t, s.cmd, "twist", time.Time{}, 90*time.Second, "the joystick's command at the robot's mux output", isDriving)
	t.Logf("operator drives the robot (first command through the mux at %s)", first.at.Format("15:04:05.000"))

	for _, down := range []struct {
		name string
		for_ time.Duration
	}{
		{"short drop (3 s, within the 10 s DDS lease)", 3 * time.Second},
		{"long drop (14 s, past the 10 s DDS lease)", 14 * time.Second},
	} {
		// Driving now: the last command the mux forwarded is the stick's.
		firstAfter(t, s.cmd, "twist", time.Now(), 30*time.Second, "driving before the drop", isDriving)
		tDown := time.Now()
		s.op.LinkDown()
		stop := firstAfter(t, s.cmd, "twist", tDown, safeLimit, "the mux's output to go to zero after the link dropped", isZero)
		still := firstAfter(t, s.odom, "odom", tDown, safeLimit, "the simulated robot to stand still after the link dropped",
			func(o sample) bool { return math.Abs(o.x) < 1e-3 && math.Abs(o.z) < 1e-3 })
		tts := stop.at.Sub(tDown)
		t.Logf("FIGURE time to safe, %s: mux output zero %.3f s, robot still (odom) %.3f s after the link dropped "+
			"(bound: teleoperation_idle_timer %.2f s + one cycle %.2f s)", down.name, tts.Seconds(), still.at.Sub(tDown).Seconds(),
			teleopIdle.Seconds(), muxCycle.Seconds())
		if wait := down.for_ - time.Since(tDown); wait > 0 {
			time.Sleep(wait)
		}
		// Nothing but zero from the stop until the link is back.
		tUp := time.Now()
		for _, c := range samples(s.cmd, "twist") {
			if c.at.After(stop.at) && c.at.Before(tUp) && !isZero(c) {
				t.Errorf("%s: the mux forwarded %+v at %s while the link was down", down.name, c, c.at.Format("15:04:05.000"))
				break
			}
		}
		s.op.LinkUp()
		back := firstAfter(t, s.cmd, "twist", tUp, 60*time.Second, "the joystick's command at the robot again after the link came back", isDriving)
		t.Logf("FIGURE rediscovery, %s: the operator drives again %.3f s after the link came back (nothing restarted)",
			down.name, back.at.Sub(tUp).Seconds())
	}

	// A slow link: 1 Mbit/s both ways while the operator's view streams the
	// map, the scans and TF over it. The operator's scans are counted before
	// and during.
	scans := s.op.Start(t, "scan-observer", s.operatorEnv, s.probe, "scan", "/scan")
	firstAfter(t, scans, "scan", time.Time{}, 30*time.Second, "the robot's scans at the operator", func(sample) bool { return true })
	before := time.Now()
	time.Sleep(4 * time.Second)
	tShape := time.Now()
	cmdHz, cmdGap := rate(samples(s.cmd, "twist"), before, tShape)
	odomHz, odomGap := rate(samples(s.odom, "odom"), before, tShape)
	scanHz, scanGap := rate(samples(scans, "scan"), before, tShape)
	t.Logf("FIGURE loops on a free link: mux cycle %.1f Hz (longest gap %v), odometry %.1f Hz (longest gap %v); "+
		"the operator receives scans at %.1f Hz (longest gap %v)", cmdHz, cmdGap.Round(time.Millisecond), odomHz,
		odomGap.Round(time.Millisecond), scanHz, scanGap.Round(time.Millisecond))
	s.op.Shape("1mbit")
	cli := filepath.Join(s.bin, "fsmnodes")
	s.op.Start(t, "echo-map", s.operatorEnv, cli, "topic", "echo", "/map")
	s.op.Start(t, "echo-tf", s.operatorEnv, cli, "topic", "echo", "/tf")
	time.Sleep(8 * time.Second)
	tEnd := time.Now()
	cmdHz, cmdGap = rate(samples(s.cmd, "twist"), tShape, tEnd)
	odomHz, odomGap = rate(samples(s.odom, "odom"), tShape, tEnd)
	scanHz, scanGap = rate(samples(scans, "scan"), tShape, tEnd)
	t.Logf("FIGURE loops on a 1 Mbit/s link with the operator streaming /map, /scan and /tf: mux cycle %.1f Hz "+
		"(longest gap %v), odometry %.1f Hz (longest gap %v); the operator receives scans at %.1f Hz (longest gap %v); "+
		"the switch's token bucket toward the operator: %s", cmdHz, cmdGap.Round(time.Millisecond), odomHz,
		odomGap.Round(time.Millisecond), scanHz, scanGap.Round(time.Millisecond), s.op.ShapeStats())
	if cmdHz == 0 || odomHz == 0 {
		t.Errorf("the robot's loops stopped on the slow link (mux %.1f Hz, odometry %.1f Hz)", cmdHz, odomHz)
	}
	var driven []sample
	for _, c := range samples(s.cmd, "twist") {
		if isDriving(c) {
			driven = append(driven, c)
		}
	}
	drive, _ := rate(driven, tShape, tEnd)
	t.Logf("FIGURE on the slow link the joystick's command was the mux output %.1f times a second (of 20)", drive)
}
