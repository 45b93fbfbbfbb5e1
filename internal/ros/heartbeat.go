package ros

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/dds"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
)

// Heartbeats of action clients: supervision of a running goal that does
// not wait for the DDS participant lease.
//
// A killed or frozen process is forgotten by its peers only when its
// participant lease expires (Cyclone's default is 10 s), so an action
// server that watches its client through the graph (action.ClientWatch)
// drives on for that long. Every process with an action client of this
// library (any client of an action's send_goal service) therefore sends a heartbeat every HeartbeatPeriod on the DDS
// topic fsmnodes_heartbeat (no "rt/" prefix: like ros_discovery_info it is
// not a ROS topic, and ROS 2 tools do not list it). Its sample is a
// builtin_interfaces/Duration, the sender's period; the sender is the
// writer's participant, as discovery reports it, not anything in the
// sample. An action server with ActionServerOptions.ClientTimeout aborts a
// goal whose client's participant has sent heartbeats and then none for
// that long (at least three of its periods). Clients that send none
// (rclcpp, rclpy) are watched only through the graph, as before.
const (
	heartbeatTopic = "fsmnodes_heartbeat"
	// heartbeatForget is when a participant silent for that long is
	// dropped from the table (its goals were aborted long before).
	heartbeatForget = time.Minute
)

// actionSendGoalService ends the name of an action's send_goal service:
// a process with a client of it sends heartbeats.
const actionSendGoalService = "/_action/send_goal"

// HeartbeatPeriod is how often a process with an action client sends its
// heartbeat.
const HeartbeatPeriod = 100 * time.Millisecond

// CounterGoalsClientLost counts goals an action server aborted because
// their client was lost (heartbeats stopped; node code that watches the
// graph with action.ClientWatch counts its aborts here too).
const CounterGoalsClientLost = "goals_aborted_client_lost"

// ErrClientLost is the cause of a goal's context when its client stopped
// sending heartbeats (ActionServerOptions.ClientTimeout); test with
// errors.Is(context.Cause(ctx), ros.ErrClientLost).
var ErrClientLost = errors.New("action client lost: its heartbeats stopped")

// heartbeats is a Context's heartbeat writer and reader, each created the
// first time it is needed.
type heartbeats struct {
	mu     sync.Mutex
	topic  *dds.Topic
	writer *dds.Writer
	reader *dds.Reader
	ready  chan struct{} // closed once reader is set
	// writers maps a heartbeat writer to its participant; beats holds
	// the latest heartbeat of each participant.
	writers map[dds.InstanceHandle]dds.GUID
	beats   map[dds.GUID]beat
	pruned  time.Time
	// denied: DDS Security does not let this process use the topic.
	denied bool
}

// beat is the latest heartbeat of one participant.
type beat struct {
	at     time.Time     // when it arrived (monotonic)
	period time.Duration // the period the sender announced
}

func (h *heartbeats) topicLocked(c *Context) (*dds.Topic, error) {
	if h.topic != nil {
		return h.topic, nil
	}
	t, err := c.part.Topic(heartbeatTopic, builtin_interfaces_msg.Duration_TypeInfo.DDSName)
	if err != nil {
		return nil, fmt.Errorf("ros: %s topic: %w", heartbeatTopic, err)
	}
	h.topic = t
	return t, nil
}

// heartbeatQoS is keep last 1, best effort, volatile: a lost heartbeat is
// replaced by the next one, and a late one is worthless.
var heartbeatQoS = QoS{History: HistoryKeepLast, Depth: 1, Reliability: ReliabilityBestEffort, Durability: DurabilityVolatile}

// heartbeatUserData is the endpoints' USER_DATA: the type hash, as every
// endpoint of ours has one when Jazzy's rmw reads it (Jazzy's
// rmw_cyclonedds warns about a non-ROS topic's endpoint without one on
// every ros2 CLI call).
func (c *Context) heartbeatUserData() []byte {
	return []byte(typeHashUserData(c.Distro(), builtin_interfaces_msg.Duration_TypeInfo.Hash))
}

// encodeHeartbeat is the sample: the period as builtin_interfaces/Duration.
func encodeHeartbeat(period time.Duration) []byte {
	e := cdr.NewEncoder(nil)
	e.Int32(int32(period / time.Second))
	e.Uint32(uint32(period % time.Second))
	return e.Bytes()
}

// decodeHeartbeat returns the period of a heartbeat sample; a malformed or
// absurd one gives ok false.
func decodeHeartbeat(b []byte) (time.Duration, bool) {
	d, err := cdr.NewDecoder(b)
	if err != nil {
		return 0, false
	}
	sec, ns := d.Int32(), d.Uint32()
	if d.Err() != nil || sec < 0 || sec > 60 || ns >= 1e9 {
		return 0, false
	}
	p := time.Duration(sec)*time.Second + time.Duration(ns)
	return p, p > 0
}

// SendHeartbeats makes the Context send its heartbeat every
// HeartbeatPeriod until it shuts down, so that action servers that
// supervise their clients (ActionServerOptions.ClientTimeout) abort this
// process's goals soon after it dies or freezes. NewActionClient calls it;
// code that sends goals through its own service clients (the CLI) calls
// it itself. Calling it again does nothing.
func (c *Context) SendHeartbeats() error {
	h := &c.hb
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.writer != nil {
		return nil
	}
	if h.denied {
		return nil
	}
	t, err := h.topicLocked(c)
	if err != nil {
		return h.deniedLocked(c, err)
	}
	q, err := heartbeatQoS.ddsQoS(c.heartbeatUserData(), false)
	if err != nil {
		return err
	}
	if h.writer, err = c.part.NewWriter(t, q); err != nil {
		return h.deniedLocked(c, fmt.Errorf("ros: %s writer: %w", heartbeatTopic, err))
	}
	w, sample := h.writer, encodeHeartbeat(HeartbeatPeriod)
	go func() {
		tick := time.NewTicker(HeartbeatPeriod)
		defer tick.Stop()
		for {
			if err := w.Write(sample); errors.Is(err, dds.ErrClosed) {
				return
			}
			select {
			case <-c.done:
				return
			case <-tick.C:
			}
		}
	}()
	return nil
}

// watchHeartbeats creates the heartbeat reader; called by NewActionServer
// when it supervises clients.
func (c *Context) watchHeartbeats() error {
	h := &c.hb
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reader != nil || h.denied {
		return nil
	}
	t, err := h.topicLocked(c)
	if err != nil {
		return h.deniedLocked(c, err)
	}
	q, err := heartbeatQoS.ddsQoS(c.heartbeatUserData(), true)
	if err != nil {
		return err
	}
	h.writers, h.beats, h.ready = map[dds.InstanceHandle]dds.GUID{}, map[dds.GUID]beat{}, make(chan struct{})
	r, err := c.part.NewReader(t, q, func(batch []dds.Sample) { c.onHeartbeats(batch) })
	h.reader = r
	close(h.ready)
	if err != nil {
		return h.deniedLocked(c, fmt.Errorf("ros: %s reader: %w", heartbeatTopic, err))
	}
	return nil
}

// deniedLocked turns a refusal by DDS Security into no heartbeats: an
// enclave whose permissions come from `ros2 security` grants ROS topics
// (rt/, rq/, rr/) and ros_discovery_info, not fsmnodes_heartbeat, and
// actions must still work there. Goals are then supervised through the
// graph only, as with rclcpp clients; it is logged once. Other errors are
// returned.
func (h *heartbeats) deniedLocked(c *Context, err error) error {
	var de *dds.Error
	if !errors.As(err, &de) || de.Code != ddsNotAllowedBySecurity {
		return err
	}
	if !h.denied {
		h.denied = true
		c.log.Warn(fmt.Sprintf("the enclave's permissions do not grant the DDS topic %s (%v): "+
			"action goals are supervised through the graph only (the DDS lease) in this process; "+
			"permissions made by fsmnodes security grant it", heartbeatTopic, err))
	}
	return nil
}

// ddsNotAllowedBySecurity is DDS_RETCODE_NOT_ALLOWED_BY_SECURITY.
const ddsNotAllowedBySecurity = -13

// onHeartbeats runs on the receive goroutine.
func (c *Context) onHeartbeats(batch []dds.Sample) {
	h := &c.hb
	h.mu.Lock()
	ready := h.ready
	h.mu.Unlock()
	<-ready // the handler may run before NewReader has returned
	now := time.Now()
	for _, s := range batch {
		period, ok := decodeHeartbeat(s.Data)
		if !ok {
			continue
		}
		h.mu.Lock()
		part, known := h.writers[s.PublicationHandle]
		r := h.reader
		h.mu.Unlock()
		if !known {
			if r == nil {
				continue
			}
			ep, ok, err := r.MatchedWriter(s.PublicationHandle)
			if err != nil || !ok {
				continue
			}
			part = ep.ParticipantKey
		}
		h.mu.Lock()
		h.writers[s.PublicationHandle] = part
		h.beats[part] = beat{at: now, period: period}
		if now.Sub(h.pruned) > heartbeatForget {
			h.pruned = now
			for p, b := range h.beats {
				if now.Sub(b.at) > heartbeatForget {
					delete(h.beats, p)
				}
			}
			for w, p := range h.writers {
				if _, ok := h.beats[p]; !ok {
					delete(h.writers, w)
				}
			}
		}
		h.mu.Unlock()
	}
}

// heartbeatOf returns the latest heartbeat of participant part.
func (c *Context) heartbeatOf(part dds.GUID) (beat, bool) {
	h := &c.hb
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.beats[part]
	return b, ok
}

// clientWatch is the heartbeat supervision of one goal's client.
type clientWatch struct {
	timeout time.Duration
	seen    bool
}

// lost reports whether the client's heartbeats, once seen, have stopped
// for longer than the watch's timeout (at least three of the client's
// periods), and how long they have. b and heard are heartbeatOf's answer
// at now.
func (w *clientWatch) lost(b beat, heard bool, now time.Time) (time.Duration, bool) {
	if !heard { // never heard, or forgotten after heartbeatForget
		return heartbeatForget, w.seen
	}
	w.seen = true
	age := now.Sub(b.at)
	return age, age > max(w.timeout, 3*b.period)
}
