package simtest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/joy"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// tick is one joint_states message of the hexapod: its stamp and the feet
// it puts the legs at (forward kinematics of the commanded angles).
type tick struct {
	at   time.Time
	feet [hexapod.NumLegs]geom.Vec3
}

// hexapodWatch records what the hexapod and its joystick driver publish.
type hexapodWatch struct {
	mu     sync.Mutex
	states []string
	ticks  []tick
	joys   []time.Time
	geo    hexapod.Geometry
}

func (w *hexapodWatch) lastState() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.states) == 0 {
		return ""
	}
	return w.states[len(w.states)-1]
}

func (w *hexapodWatch) addTick(m *sensor_msgs_msg.JointState) {
	if len(m.Position) != hexapod.NumJoints {
		return
	}
	var j hexapod.Joints
	copy(j[:], m.Position)
	tk := tick{at: time.Unix(int64(m.Header.Stamp.Sec), int64(m.Header.Stamp.Nanosec))}
	for i := range tk.feet {
		tk.feet[i] = w.geo.LegFK(i, j.Leg(i), hexapod.Pose{})
	}
	w.mu.Lock()
	w.ticks = append(w.ticks, tk)
	w.mu.Unlock()
}

// stanceStep is how far the grounded feet moved in the body frame from
// tick a to tick b (the mean over the feet on the ground in both), which
// is how far the body walked; ok is false if no foot was down in both.
func stanceStep(a, b tick) (step float64, ok bool) {
	ground := math.Inf(1)
	for i := range a.feet {
		ground = math.Min(ground, math.Min(a.feet[i].Z, b.feet[i].Z))
	}
	n := 0
	for i := range a.feet {
		if a.feet[i].Z < ground+1e-4 && b.feet[i].Z < ground+1e-4 {
			step += math.Hypot(b.feet[i].X-a.feet[i].X, b.feet[i].Y-a.feet[i].Y)
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return step / float64(n), true
}

// TestHexapodJoystick_HeldStickKeepsWalking launches the hexapod with
// launch/hexapod.launch.xml (motion_control and the joy driver) on a FIFO
// that speaks the Linux joystick protocol in place of /dev/input/js0, and
// drives it with the pad alone: Start, A to stand up, then the left stick
// held fully forward for 5 s. The hexapod must walk the whole time (state
// Walking, the body moving by the full-stick distance on every tick) and
// stop after the release; the test logs how long the stop took.
func TestHexapodJoystick_HeldStickKeepsWalking(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test")
	}
	t.Parallel() // a domain of its own
	domain := testenv.Domain(t)
	fifo := filepath.Join(t.TempDir(), "js0")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR never blocks on a FIFO and keeps a writer attached.
	pad, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pad.Close()
	var ms uint32
	send := func(events ...joy.Event) {
		t.Helper()
		var b []byte
		for _, e := range events {
			ms += 10
			e.TimeMs = ms
			b = append(b, e.Encode()...)
		}
		if _, err := pad.Write(b); err != nil {
			t.Fatal(err)
		}
	}

	launch := testenv.Launch(t, domain, "launch/hexapod.launch.xml", "joy_dev:="+fifo)

	w := &hexapodWatch{geo: hexapod.DefaultGeometry()}
	n := newNode(t, domain, "hexapod_joy_test")
	if _, err := ros.NewSubscription(n, "/hexapod_controller/state", ros.QoSLatched, func(m *std_msgs_msg.String) {
		w.mu.Lock()
		w.states = append(w.states, m.Data)
		w.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, "/joint_states", ros.QoSDefault.KeepLast(100), w.addTick); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, "/joy", ros.QoSDefault, func(m *sensor_msgs_msg.Joy) {
		w.mu.Lock()
		w.joys = append(w.joys, time.Now())
		w.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 60*time.Second, "the hexapod in Idle", func() bool { launch.MustRun(t); return w.lastState() == "Idle" })
	// The driver republishes even an empty state at 20 Hz once the pad is
	// open.
	testenv.WaitFor(t, 30*time.Second, "joy messages", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.joys) > 0
	})

	// What the kernel sends on open: 11 buttons and 8 axes at rest.
	var initial []joy.Event
	for b := uint8(0); b < 11; b++ {
		initial = append(initial, joy.Event{Type: joy.EventButton | joy.EventInit, Number: b})
	}
	for a := uint8(0); a < 8; a++ {
		initial = append(initial, joy.Event{Type: joy.EventAxis | joy.EventInit, Number: a})
	}
	send(initial...)
	button := func(b uint8, state string) {
		t.Helper()
		send(joy.Event{Type: joy.EventButton, Number: b, Value: 1})
		testenv.WaitFor(t, 20*time.Second, state, func() bool { return w.lastState() == state })
		send(joy.Event{Type: joy.EventButton, Number: b, Value: 0})
	}
	button(7, "Sitting") // Start
	button(0, "Walking") // A: stand up, then walk

	w.mu.Lock()
	mark, joysBefore := len(w.ticks), len(w.joys)
	w.mu.Unlock()
	pressed := time.Now()
	send(joy.Event{Type: joy.EventAxis, Number: 1, Value: -32767}) // left stick fully forward
	// Held for 5 s without new events: the point of the test.
	time.Sleep(5 * time.Second)
	released := time.Now()
	send(joy.Event{Type: joy.EventAxis, Number: 1, Value: 0})
	w.mu.Lock()
	joysHeld := len(w.joys) - joysBefore
	w.mu.Unlock()

	// Wait for the gait to settle: no joint moves for half a second.
	testenv.WaitFor(t, 20*time.Second, "the gait to come to rest", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		if len(w.ticks) < 50 || w.ticks[len(w.ticks)-1].at.Before(released.Add(500*time.Millisecond)) {
			return false
		}
		last := w.ticks[len(w.ticks)-1]
		for _, tk := range w.ticks[len(w.ticks)-50:] {
			if tk.feet != last.feet {
				return false
			}
		}
		return true
	})

	w.mu.Lock()
	ticks := append([]tick(nil), w.ticks[mark:]...)
	states := append([]string(nil), w.states...)
	joys := append([]time.Time(nil), w.joys...)
	w.mu.Unlock()
	// joyGap reports whether no Joy message reached this test for longer
	// than most of the hexapod's joy.timeout (0.5 s) shortly before at: on
	// a starved machine the joy process can stall that long, and then the
	// stick rightly counts as released (the safety rule, not a lapse).
	joyGap := func(at time.Time) bool {
		prev := time.Time{}
		for _, j := range joys {
			if j.After(at) {
				break
			}
			if !prev.IsZero() && j.Sub(prev) > 400*time.Millisecond && at.Sub(j) < time.Second {
				return true
			}
			prev = j
		}
		return !prev.IsZero() && at.Sub(prev) > 400*time.Millisecond
	}
	if states[len(states)-1] != "Walking" {
		t.Fatalf("states %v: the hexapod left Walking", states)
	}

	// Full stick is MaxLinearSpeed; at the default 100 Hz that is this far
	// per tick.
	gait := hexapod.DefaultGaitConfig()
	full := gait.MaxLinearSpeed() / gait.Rate
	var (
		started      time.Time
		walkingTicks int
		lapsed       []string
		excused      []string
		stoppedAt    time.Time
		lastMove     time.Time
	)
	for k := 1; k < len(ticks); k++ {
		a, b := ticks[k-1], ticks[k]
		if b.feet != a.feet {
			lastMove = b.at
		}
		step, ok := stanceStep(a, b)
		if !ok {
			t.Fatalf("tick at %v: no foot on the ground", b.at.Sub(pressed))
		}
		if b.at.Before(released) {
			if started.IsZero() {
				if step > 0.5*full {
					started = b.at
				}
				continue
			}
			walkingTicks++
			if step < 0.9*full || step > 1.1*full {
				l := fmt.Sprintf("%v: %.2f mm", b.at.Sub(pressed).Round(time.Millisecond), step*1e3)
				if step < 0.9*full && joyGap(b.at) {
					excused = append(excused, l)
				} else {
					lapsed = append(lapsed, l)
				}
			}
			continue
		}
		if step < 1e-9 {
			if stoppedAt.IsZero() {
				stoppedAt = b.at
			}
		} else {
			stoppedAt = time.Time{} // still walking: the stop comes later
		}
	}
	if started.IsZero() {
		t.Fatal("the hexapod never walked while the stick was held")
	}
	held := released.Sub(started)
	t.Logf("stick held %v: walking %v after the press, %d ticks walked over %v, %d joy messages (autorepeat 20 Hz)",
		released.Sub(pressed).Round(time.Millisecond), started.Sub(pressed).Round(time.Millisecond),
		walkingTicks, held.Round(time.Millisecond), joysHeld)
	if len(excused) > 0 {
		t.Logf("%d ticks did not walk after a gap of over 0.4 s in the joy messages (a stalled joy process; the stick then counts as released): %v",
			len(excused), excused[:min(len(excused), 10)])
	}
	if len(lapsed) > 0 {
		t.Fatalf("%d of %d ticks while the stick was held did not walk at full stick (%.2f mm/tick), first: %v",
			len(lapsed), walkingTicks, full*1e3, lapsed[:min(len(lapsed), 10)])
	}
	if held < 4*time.Second || walkingTicks < 100 {
		t.Fatalf("walked only %v (%d ticks) of the 5 s the stick was held", held, walkingTicks)
	}
	if joysHeld < 20 {
		t.Fatalf("only %d joy messages in 5 s of a held stick: no autorepeat", joysHeld)
	}
	if stoppedAt.IsZero() {
		t.Fatal("the body never stopped after the release")
	}
	stop := stoppedAt.Sub(released)
	settle := lastMove.Sub(released)
	t.Logf("released: body stopped after %v (issue bound 0.5 s), gait at rest (feet back at neutral) after %v",
		stop.Round(time.Millisecond), settle.Round(time.Millisecond))
	if stop > 3*time.Second {
		t.Fatalf("the body stopped only %v after the release", stop)
	}
}
