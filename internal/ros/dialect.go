package ros

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// Dialect selection.
//
// Humble and Jazzy share the ros_discovery_info topic and type name but not
// its layout (24- vs 16-byte Gids), so a process that writes the other
// distro's layout breaks the graph tools of every peer: a Humble
// `ros2 node list` fails with "empty node name returned by the RMW layer".
// With ROS_DISTRO set (or ContextOptions.Distro), the dialect is fixed.
// Without it, a Context follows the peers already on the domain:
//
//   - NewContext waits up to dialectWait for a ros_discovery_info sample
//     from a peer whose dialect is fixed, and speaks that peer's dialect;
//   - with no such peer it speaks Jazzy (the default) until one appears,
//     and if that peer is Humble it switches and re-announces its nodes in
//     Humble's layout (entities created before keep their Jazzy extras,
//     typehash= USER_DATA and ~/get_type_description, which Humble ignores);
//   - once it has followed a peer it never switches again (a domain with
//     both distros is broken for ROS 2 itself; that is warned about once).
//
// Such a Context marks its ros_discovery_info writer and reader with the
// USER_DATA "dialect=auto;" so that other following Contexts do not follow
// it: only real ROS 2 processes and fsmnodes processes with an explicit
// ROS_DISTRO decide. A peer's dialect is read from the sample itself (a
// layout is accepted only if it decodes exactly and names the writer's own
// participant), and earlier from its ros_discovery_info reader, whose
// USER_DATA carries Jazzy's "typehash=" and never Humble's
// (onReaderDialect).
//
// First contact: a Humble process that reads one Jazzy-layout sample keeps
// a garbage graph entry for its whole life (its ros2 node list fails with
// "empty node name returned by the RMW layer"), and our writer is
// transient-local, so a new reader is sent what the writer holds as soon as
// Cyclone matches it. Until a peer decided, the Context therefore arms the
// participant's reader gate (dds.Participant.GateReaders): Cyclone then
// hands a new remote reader to onReaderDialect, which switches to Humble
// and rewrites the sample, before it matches that reader with our writer.

// dialectAutoUserData marks the ros_discovery_info writer of a Context whose
// dialect follows the domain (parsed like any rmw key=value USER_DATA; ROS 2
// ignores unknown keys).
const dialectAutoUserData = "dialect=auto;"

// How long NewContext waits for a peer to show the domain's dialect when
// ROS_DISTRO is not set: at most dialectWait, and no longer than dialectQuiet
// once every ROS 2 participant discovered so far has sent its
// ros_discovery_info (or none was discovered). Across processes on one host
// a peer's sample arrives 5-25 ms after NewContext starts; a peer that shows
// up later is still followed, by switching.
const (
	dialectWait  = time.Second
	dialectQuiet = 150 * time.Millisecond
)

// dialect holds a Context's wire dialect and how it was chosen.
type dialect struct {
	cur      atomic.Int32 // Distro in use
	explicit bool         // ROS_DISTRO (or ContextOptions.Distro) was given
	domainID uint32

	mu          sync.Mutex
	followed    bool          // auto: a peer decided the dialect
	decided     chan struct{} // closed when followed
	warnedOther bool          // a peer of the other dialect was reported
}

func newDialect(d Distro, explicit bool, domainID uint32) *dialect {
	dl := &dialect{explicit: explicit, domainID: domainID, decided: make(chan struct{})}
	dl.cur.Store(int32(d))
	return dl
}

// get returns the dialect in use.
func (dl *dialect) get() Distro { return Distro(dl.cur.Load()) }

// dialectEvent is what observe decided: a message to log (level by kind) and
// whether the dialect changed.
type dialectEvent struct {
	msg      string
	warn     bool
	switched bool
}

// observe takes the dialect of a peer whose dialect is fixed (a ROS 2
// process, or fsmnodes with ROS_DISTRO set).
func (dl *dialect) observe(peer Distro, from dds.GUID) dialectEvent {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	cur := dl.get()
	switch {
	case dl.explicit:
		if peer == cur || dl.warnedOther {
			return dialectEvent{}
		}
		dl.warnedOther = true
		return dialectEvent{warn: true, msg: fmt.Sprintf(
			"participant %s on domain %d speaks %s but ROS_DISTRO selects %s: graph tools on both sides "+
				"(ros2 node list) will misread each other's nodes; unset ROS_DISTRO to follow the domain",
			from, dl.domainID, dialectDesc(peer), dialectDesc(cur))}
	case dl.followed:
		if peer == cur || dl.warnedOther {
			return dialectEvent{}
		}
		dl.warnedOther = true
		return dialectEvent{warn: true, msg: fmt.Sprintf(
			"participant %s on domain %d speaks %s while earlier peers speak %s: ROS 2 graph tools do not work "+
				"across distros; staying with %s", from, dl.domainID, dialectDesc(peer), cur, cur)}
	}
	dl.followed = true
	msg := fmt.Sprintf("ROS_DISTRO is not set: speaking %s, as participant %s on domain %d does",
		dialectDesc(peer), from, dl.domainID)
	// The dialect first, then the signal: NewContext reads it as soon as
	// decided is closed.
	dl.cur.Store(int32(peer))
	close(dl.decided)
	if peer == cur {
		return dialectEvent{msg: msg}
	}
	return dialectEvent{switched: true, msg: msg}
}

// awaitDialect blocks until a peer decided the dialect, or quietFor
// passed and no discovered ROS 2 participant still owes its
// ros_discovery_info, or waitFor passed (NewContext gives dialectWait and
// dialectQuiet). It reports whether a peer decided.
func (c *Context) awaitDialect(waitFor, quietFor time.Duration) bool {
	limit := time.NewTimer(waitFor)
	defer limit.Stop()
	quiet := time.NewTimer(quietFor)
	defer quiet.Stop()
	quietPassed := false
	for {
		changed := c.graph.changedChan()
		if quietPassed && !c.graph.infoPending() {
			return false
		}
		select {
		case <-c.dialect.decided:
			return true
		case <-limit.C:
			return false
		case <-quiet.C:
			quietPassed = true
		case <-changed:
		}
	}
}

// dialectDesc names a dialect with its ros_discovery_info layout.
func dialectDesc(d Distro) string {
	return fmt.Sprintf("%s (%d-byte GIDs)", d, d.gidSize())
}

// sniffParticipantInfo decodes a ros_discovery_info payload in whichever
// layout fits, trying prefer first. A layout fits when it consumes the
// payload exactly (up to 3 bytes of padding), Humble's Gid padding is zero,
// and, when writerPart is non-zero, the sample names the writer's own
// participant. ok is false when neither fits.
func sniffParticipantInfo(payload []byte, prefer Distro, writerPart dds.GUID) (participantInfo, Distro, bool) {
	for _, d := range []Distro{prefer, prefer.other()} {
		p, err := decodeParticipantInfo(payload, d)
		if err != nil {
			continue
		}
		if writerPart != (dds.GUID{}) && p.GID != writerPart {
			continue
		}
		return p, d, true
	}
	return participantInfo{}, prefer, false
}

// isAutoDialect reports whether USER_DATA marks a ros_discovery_info
// writer or reader whose dialect follows the domain.
func isAutoDialect(userData []byte) bool {
	return bytes.Contains(userData, []byte(dialectAutoUserData)) &&
		parseUserData(userData)["dialect"] == "auto"
}

// onDiscovery is the Context's discovery handler (receive goroutine): the
// graph's, then the dialect a new remote ros_discovery_info reader shows.
func (c *Context) onDiscovery(ev dds.DiscoveryEvent) {
	c.graph.onDiscovery(ev)
	if ev.Kind != dds.KindReader || ev.Local || !ev.Alive || ev.TopicName != discoveryInfoTopic ||
		isAutoDialect(ev.UserData) {
		return
	}
	peer := Humble
	if _, ok := parseUserData(ev.UserData)["typehash"]; ok {
		peer = Jazzy
	}
	c.takeDialectEvent(c.dialect.observe(peer, ev.ParticipantKey), peer)
}

// takeDialectEvent logs what observe decided and, on a switch, re-announces
// the nodes in the new layout. Once the dialect is settled the reader gate
// is no longer needed.
func (c *Context) takeDialectEvent(ev dialectEvent, peer Distro) {
	switch {
	case ev.msg == "":
	case ev.warn:
		c.log.Warn(ev.msg)
	case ev.switched && c.republishGraphInfo():
		c.log.Info(ev.msg + " (switched from " + dialectDesc(peer.other()) + "; nodes re-announced)")
	default:
		c.log.Info(ev.msg)
	}
	if c.dialect.settled() && c.gateArmed.CompareAndSwap(true, false) {
		if err := c.part.GateReaders(discoveryInfoTopic, false); err != nil && !errors.Is(err, dds.ErrClosed) {
			c.log.Warn("disarming the discovery reader gate: " + err.Error())
		}
	}
}

// settled reports whether the dialect can no longer change: fixed by
// ROS_DISTRO, or decided by a peer.
func (dl *dialect) settled() bool {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	return dl.explicit || dl.followed
}
