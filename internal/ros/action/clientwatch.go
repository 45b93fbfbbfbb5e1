package action

import "time"

// DefaultClientLostAfter is how long ClientWatch waits, with nobody
// listening, before it calls a goal's client lost.
const DefaultClientLostAfter = 500 * time.Millisecond

// ClientWatch tells an action server that the client of a running goal has
// gone (crashed, killed, or cut off), so a server that moves a robot can
// abort the goal and stop instead of driving on for nobody.
//
// The action protocol does not say which client sent a goal, but every
// rclcpp, rclpy and fsmnodes action client subscribes to the action's
// feedback and status topics. ClientWatch is fed the number of such
// subscribers in the graph (Node.ActionListeners) every control period: a
// goal's client counts as lost when, after there was at least one
// listener, there has been none for LostAfter. A dead process's
// subscriptions leave the graph when its DDS participant lease expires
// (Cyclone's default is 10 s; Discovery/LeaseDuration in CYCLONEDDS_URI
// shortens it), so that lease bounds how fast a lost client is noticed.
// Goals sent by clients that never subscribe to either topic are never
// treated as lost.
//
// The zero value uses DefaultClientLostAfter. A ClientWatch serves one
// goal and is not safe for concurrent use.
type ClientWatch struct {
	// LostAfter is how long nobody may listen; zero means
	// DefaultClientLostAfter.
	LostAfter time.Duration

	seen   bool
	lonely time.Time
}

// Lost takes the number of listeners at now and reports whether the
// goal's client is gone.
func (w *ClientWatch) Lost(listeners int, now time.Time) bool {
	after := w.LostAfter
	if after <= 0 {
		after = DefaultClientLostAfter
	}
	switch {
	case listeners > 0:
		w.seen, w.lonely = true, time.Time{}
	case !w.seen:
	case w.lonely.IsZero():
		w.lonely = now
	case now.Sub(w.lonely) > after:
		return true
	}
	return false
}
