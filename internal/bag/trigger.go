package bag

import (
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	fsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/fsm_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// Detector finds the flight recorder's events in the recorded messages
// (docs/recording.md#flight-recorder).
// It keeps the last state seen per topic; the first message of a topic
// only sets it. The events:
//
//   - estop: an rsm_msgs/OperationMode topic (the mux's
//     rsm/operationMode) whose emergency_stop goes false -> true;
//   - autonomy_stop: the same topic's mode going AUTONOMOUS -> STOPPED
//     without an e-stop (the mux's autonomy watchdog, or a stop command);
//   - ve_body_safe: a .../ve_body/state topic (std_msgs/String) going from
//     transp or transp_st to a safe state;
//   - fault_counter: a /diagnostics status "<node>: counters" going from
//     OK to WARN (a fault counter rose since the node's previous report).
//
// Where the nodes publish their state machines' transitions
// (fsm_msgs/Transition on ~/fsm/transition, docs/fsm.md), those give the
// events with the machine's own states and cause, and the topic-based
// rules for the same machine are no longer used once one of its
// transitions was seen (so one e-stop is one event):
//
//   - estop: machine operation_mode entering an E-STOP/ state from one
//     that is not;
//   - watchdog_stop: machine operation_mode moving with cause
//     autonomy_cmd_vel_timeout (the mux's autonomy watchdog);
//   - ve_body_safe: machine ve_body from transp or transp_st to a safe
//     state.
//
// ~/fsm/transition is transient local: what arrives within
// TransitionHistoryWindow of a topic's first message is its history and
// only marks the machine as seen.
//
// Malformed messages are counted and ignored.
type Detector struct {
	mu         sync.Mutex
	modes      map[string]rsm_msgs_msg.OperationMode
	body       map[string]string
	diag       map[string]byte
	firstTrans map[string]time.Time // transition topic -> first receive time
	machines   map[string]bool      // machines seen on a transition topic
	Malformed  uint64
}

// TransitionHistoryWindow is how long after a transition topic's first
// message what comes is taken as its (transient local) history.
const TransitionHistoryWindow = 500 * time.Millisecond

// NewDetector returns a Detector with no state.
func NewDetector() *Detector {
	return &Detector{modes: map[string]rsm_msgs_msg.OperationMode{}, body: map[string]string{}, diag: map[string]byte{},
		firstTrans: map[string]time.Time{}, machines: map[string]bool{}}
}

var modeNames = map[uint8]string{
	rsm_msgs_msg.OperationMode_STOPPED:       "STOPPED",
	rsm_msgs_msg.OperationMode_AUTONOMOUS:    "AUTONOMOUS",
	rsm_msgs_msg.OperationMode_TELEOPERATION: "TELEOPERATION",
}

func modeName(m rsm_msgs_msg.OperationMode) string {
	n, ok := modeNames[m.Mode]
	if !ok {
		n = "mode " + string(rune('0'+m.Mode%10))
	}
	if m.EmergencyStop {
		return n + "+EMERGENCY_STOP"
	}
	return n
}

// Check returns the events one message shows (usually none).
func (d *Detector) Check(topic, typ string, recv time.Time, data []byte) []Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case typ == "fsm_msgs/msg/Transition":
		var m fsm_msgs_msg.Transition
		if rosidl.Unmarshal(data, &m) != nil {
			d.Malformed++
			return nil
		}
		d.machines[m.Machine] = true
		first, ok := d.firstTrans[topic]
		if !ok {
			d.firstTrans[topic] = recv
			first = recv
		}
		if recv.Sub(first) < TransitionHistoryWindow {
			return nil
		}
		ev := Event{Time: recv, Topic: topic, Machine: m.Machine, From: m.FromState, To: m.ToState, Cause: m.Cause}
		switch {
		case m.Machine == "operation_mode" && strings.HasPrefix(m.ToState, "E-STOP/") && m.FromState != "" && !strings.HasPrefix(m.FromState, "E-STOP/"):
			ev.Kind = "estop"
		case m.Machine == "operation_mode" && m.Cause == "autonomy_cmd_vel_timeout":
			ev.Kind = "watchdog_stop"
		case m.Machine == "ve_body" && (m.FromState == "transp" || m.FromState == "transp_st") && strings.HasPrefix(m.ToState, "safe"):
			ev.Kind = "ve_body_safe"
		default:
			return nil
		}
		return []Event{ev}
	case typ == "rsm_msgs/msg/OperationMode":
		var m rsm_msgs_msg.OperationMode
		if rosidl.Unmarshal(data, &m) != nil {
			d.Malformed++
			return nil
		}
		prev, seen := d.modes[topic]
		d.modes[topic] = m
		if !seen || prev == m || d.machines["operation_mode"] {
			return nil
		}
		ev := Event{Time: recv, Topic: topic, From: modeName(prev), To: modeName(m)}
		switch {
		case m.EmergencyStop && !prev.EmergencyStop:
			ev.Kind, ev.Cause = "estop", "emergency stop pressed"
		case !m.EmergencyStop && prev.Mode == rsm_msgs_msg.OperationMode_AUTONOMOUS && m.Mode == rsm_msgs_msg.OperationMode_STOPPED:
			ev.Kind, ev.Cause = "autonomy_stop", "autonomy stopped (autonomy watchdog or stop command)"
		default:
			return nil
		}
		return []Event{ev}
	case typ == "std_msgs/msg/String" && strings.HasSuffix(topic, "/ve_body/state"):
		var m std_msgs_msg.String
		if rosidl.Unmarshal(data, &m) != nil {
			d.Malformed++
			return nil
		}
		prev := d.body[topic]
		d.body[topic] = m.Data
		if !d.machines["ve_body"] && (prev == "transp" || prev == "transp_st") && strings.HasPrefix(m.Data, "safe") {
			return []Event{{Time: recv, Kind: "ve_body_safe", Topic: topic, From: prev, To: m.Data, Cause: "ve_body left transp for safe"}}
		}
		return nil
	case typ == "diagnostic_msgs/msg/DiagnosticArray":
		var m diagnostic_msgs_msg.DiagnosticArray
		if rosidl.Unmarshal(data, &m) != nil {
			d.Malformed++
			return nil
		}
		var out []Event
		for _, st := range m.Status {
			if !strings.HasSuffix(st.Name, ": counters") {
				continue
			}
			prev, seen := d.diag[st.Name]
			d.diag[st.Name] = st.Level
			if seen && prev == diagnostic_msgs_msg.DiagnosticStatus_OK && st.Level == diagnostic_msgs_msg.DiagnosticStatus_WARN {
				out = append(out, Event{Time: recv, Kind: "fault_counter", Topic: topic, From: "OK", To: "WARN",
					Cause: strings.TrimSuffix(st.Name, ": counters") + ": " + st.Message})
			}
		}
		return out
	}
	return nil
}
