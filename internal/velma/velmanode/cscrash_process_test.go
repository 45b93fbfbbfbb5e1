package velmanode

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// jointSample is one /joint_states message as the observer received it.
type jointSample struct {
	at    time.Time
	speed float64 // largest |q̇| of the 15 body joints
}

// jointLog records every /joint_states message.
type jointLog struct {
	mu  sync.Mutex
	all []jointSample
}

func (l *jointLog) add(m *sensor_msgs_msg.JointState) {
	speed := 0.0
	for i, v := range m.Velocity {
		if i < 15 { // torso and both arms; the head is not damped by ve_body
			speed = math.Max(speed, math.Abs(v))
		}
	}
	l.mu.Lock()
	l.all = append(l.all, jointSample{time.Now(), speed})
	l.mu.Unlock()
}

// since returns the samples received after t.
func (l *jointLog) since(t time.Time) []jointSample {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []jointSample
	for _, s := range l.all {
		if s.at.After(t) {
			out = append(out, s)
		}
	}
	return out
}

// A control subsystem killed mid-motion, seen the way an operator sees it:
// on the ROS topics of the four processes, never their buffers. While
// velma_core_cs is dead, /velma_core/ve_body/state says safe (from
// ve_body's own records), /joint_states keeps coming and shows the arm
// slowing to rest, and /velma_core/cs/state says cs's state is unknown;
// a restarted cs brings back transp, cs's state and ~/status.
func TestFourProcesses_CSKilledSeenOnTopics(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()     // a domain of its own
	testenv.Heavy(t) // Velma's 500 Hz loops in processes of their own
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var bodyState latest[string]
	var joints jointLog
	r := newMPRig(t, ctx, func(n *ros.Node) error {
		if err := sub(n, "/velma_core/ve_body/state", ros.QoSLatched, func(m *std_msgs_msg.String) { bodyState.set(m.Data) }); err != nil {
			return err
		}
		return sub(n, "/joint_states", ros.QoSDefault, joints.add)
	})
	body := r.procs["velma_core_ve_body"]

	r.moving()
	waitFor(t, ctx, "/joint_states shows the motion", func() bool {
		s := joints.since(time.Now().Add(-100 * time.Millisecond))
		return len(s) > 0 && s[len(s)-1].speed > 0.05
	})
	_, bodyMsgs := bodyState.get()
	killed := time.Now()
	r.kill("velma_core_cs")

	// bounds of the waits below are failure bounds, not results: the
	// figures are logged
	bound, cancelBound := context.WithTimeout(ctx, 5*time.Second)
	defer cancelBound()
	waitFor(t, bound, "/velma_core/ve_body/state safe after cs was killed", func() bool {
		v, n := bodyState.get()
		return n > bodyMsgs && v == "safe"
	})
	safeAfter := time.Since(killed)
	waitFor(t, bound, "/velma_core/cs/state marked unknown", func() bool { v, _ := r.csState.get(); return v == CSStateUnknown })
	unknownAfter := time.Since(killed)
	_, stN := r.st.get()

	// the arm comes to rest under ve_body's safe damping, on /joint_states
	restCtx, cancelRest := context.WithTimeout(ctx, 10*time.Second)
	defer cancelRest()
	var restAfter time.Duration
	waitFor(t, restCtx, "/joint_states: the arm at rest (< 0.02 rad/s)", func() bool {
		s := joints.since(killed)
		if len(s) == 0 || s[len(s)-1].speed >= 0.02 {
			return false
		}
		restAfter = s[len(s)-1].at.Sub(killed)
		return true
	})
	// and joint_states keep coming with cs dead: one more second of them
	rested := time.Now()
	flowCtx, cancelFlow := context.WithTimeout(ctx, 10*time.Second)
	defer cancelFlow()
	waitFor(t, flowCtx, "/joint_states flowing with cs dead (25 messages)", func() bool { return len(joints.since(rested)) >= 25 })

	after := joints.since(killed)
	var profile []float64
	peak := 0.0
	for _, s := range after {
		if s.at.Sub(killed) < time.Second {
			profile = append(profile, math.Round(s.speed*1000)/1000)
		}
		peak = math.Max(peak, s.speed)
	}
	t.Logf("cs killed: /velma_core/ve_body/state safe after %v, /velma_core/cs/state %q after %v, arm at rest on /joint_states after %v; %d joint_states since the kill, body speed over the first second [rad/s]: %v",
		safeAfter.Round(time.Millisecond), CSStateUnknown, unknownAfter.Round(time.Millisecond), restAfter.Round(time.Millisecond), len(after), profile)
	if last := after[len(after)-1].speed; last >= 0.02 {
		t.Errorf("joint_states: the arm moves at %.3f rad/s with cs dead, want at rest", last)
	}
	if peak > 1.5 {
		t.Errorf("joint_states: body speed %.2f rad/s after the kill: the goal asked 0.8, the safe damping must only slow the arm", peak)
	}
	if v, _ := bodyState.get(); v != "safe" {
		t.Errorf("/velma_core/ve_body/state %q with cs dead, want safe", v)
	}
	if v, _ := r.csState.get(); v != CSStateUnknown {
		t.Errorf("/velma_core/cs/state %q with cs dead, want %q", v, CSStateUnknown)
	}
	if _, n := r.st.get(); n > stN+1 {
		t.Errorf("/velma_core/status went on with cs dead (%d messages): it is cs's status, it must pause", n-stN)
	}
	body.MustRun(t)

	// a new cs: ve_body back to transp after its > 500 safe iterations,
	// cs's state and ~/status back on the topics
	r.start("velma_core_cs")
	r.ready("cs restarted")
	waitFor(t, ctx, "/velma_core/cs/state safe again", func() bool { v, _ := r.csState.get(); return v == "safe" })
	waitFor(t, ctx, "/velma_core/ve_body/state transp again", func() bool { v, _ := bodyState.get(); return v == "transp" })
	_, n0 := r.st.get()
	waitFor(t, ctx, "/velma_core/status again", func() bool { s, n := r.st.get(); return n > n0+5 && s.CsState == "safe" })
	back := time.Now()
	waitFor(t, ctx, "/joint_states still flowing", func() bool { return len(joints.since(back)) >= 10 })
	body.MustRun(t) // the same ve_body process throughout
}
