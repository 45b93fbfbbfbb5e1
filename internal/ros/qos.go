package ros

import (
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// History is the ROS history policy (rmw numbering).
type History int

// History policies. The zero value is the system default (keep last).
const (
	HistorySystemDefault History = iota
	HistoryKeepLast
	HistoryKeepAll
)

// Reliability is the ROS reliability policy (rmw numbering).
type Reliability int

// Reliability policies. The zero value is the system default (reliable).
const (
	ReliabilitySystemDefault Reliability = iota
	ReliabilityReliable
	ReliabilityBestEffort
)

// Durability is the ROS durability policy (rmw numbering).
type Durability int

// Durability policies. The zero value is the system default (volatile).
const (
	DurabilitySystemDefault Durability = iota
	DurabilityTransientLocal
	DurabilityVolatile
)

// Liveliness is the ROS liveliness policy (rmw numbering; 2 is unused).
type Liveliness int

// Liveliness policies. The zero value is the system default (automatic).
const (
	LivelinessSystemDefault Liveliness = 0
	LivelinessAutomatic     Liveliness = 1
	LivelinessManualByTopic Liveliness = 3
)

// DurationInfinite is RMW_DURATION_INFINITE for Deadline, Lifespan and
// LivelinessLeaseDuration. A zero duration means "unspecified" (the DDS
// default, which is infinite for all three).
const DurationInfinite = time.Duration(math.MaxInt64)

// QoS is a ROS 2 QoS profile. Profiles are plain values: copy one of the
// predefined profiles and adjust it with the methods below, which return
// modified copies.
type QoS struct {
	History History
	// Depth of a keep-last history; 0 means the system default (1).
	Depth       int
	Reliability Reliability
	Durability  Durability
	// Deadline, Lifespan, LivelinessLeaseDuration: 0 = unspecified.
	Deadline, Lifespan      time.Duration
	Liveliness              Liveliness
	LivelinessLeaseDuration time.Duration
	// AvoidROSNamespaceConventions makes the DDS topic name the plain ROS
	// name without the "rt/", "rq/", "rr/" prefixes.
	AvoidROSNamespaceConventions bool
}

// Predefined profiles (rmw/qos_profiles.h, rcl, rclcpp). They are values:
// treat them as read-only and use the methods to derive variants.
var (
	// QoSDefault: keep last 10, reliable, volatile.
	QoSDefault = QoS{History: HistoryKeepLast, Depth: 10, Reliability: ReliabilityReliable, Durability: DurabilityVolatile}
	// QoSSensorData: keep last 5, best effort, volatile.
	QoSSensorData = QoS{History: HistoryKeepLast, Depth: 5, Reliability: ReliabilityBestEffort, Durability: DurabilityVolatile}
	// QoSServices: keep last 10, reliable, volatile (services_default).
	QoSServices = QoS{History: HistoryKeepLast, Depth: 10, Reliability: ReliabilityReliable, Durability: DurabilityVolatile}
	// QoSParameters: keep last 1000, reliable, volatile (parameter services).
	QoSParameters = QoS{History: HistoryKeepLast, Depth: 1000, Reliability: ReliabilityReliable, Durability: DurabilityVolatile}
	// QoSParameterEvents: keep last 1000, reliable, volatile.
	QoSParameterEvents = QoS{History: HistoryKeepLast, Depth: 1000, Reliability: ReliabilityReliable, Durability: DurabilityVolatile}
	// QoSSystemDefault leaves every policy at the system default.
	QoSSystemDefault = QoS{}
	// QoSRosout: keep last 1000, reliable, transient local, lifespan 10 s.
	QoSRosout = QoS{History: HistoryKeepLast, Depth: 1000, Reliability: ReliabilityReliable, Durability: DurabilityTransientLocal, Lifespan: 10 * time.Second}
	// QoSClock: keep last 1, best effort, volatile (rclcpp ClockQoS).
	QoSClock = QoS{History: HistoryKeepLast, Depth: 1, Reliability: ReliabilityBestEffort, Durability: DurabilityVolatile}
	// QoSLatched: keep last 1, reliable, transient local ("latched"
	// topics such as /tf_static or /map).
	QoSLatched = QoS{History: HistoryKeepLast, Depth: 1, Reliability: ReliabilityReliable, Durability: DurabilityTransientLocal}
)

// TransientLocal returns q with transient-local durability.
func (q QoS) TransientLocal() QoS { q.Durability = DurabilityTransientLocal; return q }

// Volatile returns q with volatile durability.
func (q QoS) Volatile() QoS { q.Durability = DurabilityVolatile; return q }

// Reliable returns q with reliable reliability.
func (q QoS) Reliable() QoS { q.Reliability = ReliabilityReliable; return q }

// BestEffort returns q with best-effort reliability.
func (q QoS) BestEffort() QoS { q.Reliability = ReliabilityBestEffort; return q }

// KeepLast returns q with a keep-last history of the given depth.
func (q QoS) KeepLast(depth int) QoS { q.History = HistoryKeepLast; q.Depth = depth; return q }

// KeepAll returns q with a keep-all history.
func (q QoS) KeepAll() QoS { q.History = HistoryKeepAll; return q }

// Validate reports policies that cannot be mapped onto DDS.
func (q QoS) Validate() error {
	if q.History < HistorySystemDefault || q.History > HistoryKeepAll {
		return fmt.Errorf("qos: unknown history policy %d", q.History)
	}
	if q.Reliability < ReliabilitySystemDefault || q.Reliability > ReliabilityBestEffort {
		return fmt.Errorf("qos: unknown reliability policy %d", q.Reliability)
	}
	if q.Durability < DurabilitySystemDefault || q.Durability > DurabilityVolatile {
		return fmt.Errorf("qos: unknown durability policy %d", q.Durability)
	}
	switch q.Liveliness {
	case LivelinessSystemDefault, LivelinessAutomatic, LivelinessManualByTopic:
	default:
		return fmt.Errorf("qos: unknown liveliness policy %d", q.Liveliness)
	}
	if q.History != HistoryKeepAll && (q.Depth < 0 || q.Depth > math.MaxInt32) {
		return fmt.Errorf("qos: depth %d out of range 0..%d", q.Depth, math.MaxInt32)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"deadline", q.Deadline}, {"lifespan", q.Lifespan}, {"liveliness lease duration", q.LivelinessLeaseDuration}} {
		if d.v < 0 {
			return fmt.Errorf("qos: negative %s %v", d.name, d.v)
		}
	}
	return nil
}

// effectiveDepth is the keep-last depth as rmw_cyclonedds applies it.
func (q QoS) effectiveDepth() int {
	if q.Depth == 0 {
		return 1
	}
	return q.Depth
}

// ddsQoS maps q onto Cyclone QoS exactly as rmw_cyclonedds'
// create_readwrite_qos does: system defaults become keep-last / reliable /
// volatile / automatic, depth 0 becomes 1, unspecified and infinite
// durations are left unset (DDS default: infinite).
func (q QoS) ddsQoS(userData []byte, ignoreLocal bool) (dds.QoS, error) {
	if err := q.Validate(); err != nil {
		return dds.QoS{}, err
	}
	out := dds.QoS{UserData: userData, IgnoreLocal: ignoreLocal}
	if q.History == HistoryKeepAll {
		out.History = dds.KeepAll
	} else {
		out.History = dds.KeepLast
		out.Depth = int32(q.effectiveDepth())
	}
	if q.Reliability == ReliabilityBestEffort {
		out.Reliability = dds.BestEffort
	} else {
		out.Reliability = dds.Reliable
	}
	if q.Durability == DurabilityTransientLocal {
		out.Durability = dds.TransientLocal
	} else {
		out.Durability = dds.Volatile
	}
	if q.Liveliness == LivelinessManualByTopic {
		out.Liveliness = dds.ManualByTopic
	} else {
		out.Liveliness = dds.Automatic
	}
	finite := func(d time.Duration) time.Duration {
		if d == DurationInfinite {
			return 0
		}
		return d
	}
	out.Deadline = finite(q.Deadline)
	out.Lifespan = finite(q.Lifespan)
	out.LeaseDuration = finite(q.LivelinessLeaseDuration)
	return out, nil
}

// qosFromDDS is the reverse mapping used to report the QoS of discovered
// endpoints (unset durations are reported as infinite, like rmw does).
func qosFromDDS(d dds.QoS) QoS {
	q := QoS{Depth: int(d.Depth)}
	if d.History == dds.KeepAll {
		q.History = HistoryKeepAll
		q.Depth = 0
	} else {
		q.History = HistoryKeepLast
	}
	if d.Reliability == dds.BestEffort {
		q.Reliability = ReliabilityBestEffort
	} else {
		q.Reliability = ReliabilityReliable
	}
	if d.Durability == dds.TransientLocal {
		q.Durability = DurabilityTransientLocal
	} else {
		q.Durability = DurabilityVolatile
	}
	if d.Liveliness == dds.ManualByTopic {
		q.Liveliness = LivelinessManualByTopic
	} else {
		q.Liveliness = LivelinessAutomatic
	}
	inf := func(v time.Duration) time.Duration {
		if v == 0 {
			return DurationInfinite
		}
		return v
	}
	q.Deadline = inf(d.Deadline)
	q.Lifespan = inf(d.Lifespan)
	q.LivelinessLeaseDuration = inf(d.LeaseDuration)
	return q
}

// String names the policy as ros2 tools do.
func (h History) String() string {
	switch h {
	case HistorySystemDefault:
		return "SYSTEM_DEFAULT"
	case HistoryKeepLast:
		return "KEEP_LAST"
	case HistoryKeepAll:
		return "KEEP_ALL"
	}
	return "UNKNOWN"
}

// String names the policy as ros2 tools do.
func (r Reliability) String() string {
	switch r {
	case ReliabilitySystemDefault:
		return "SYSTEM_DEFAULT"
	case ReliabilityReliable:
		return "RELIABLE"
	case ReliabilityBestEffort:
		return "BEST_EFFORT"
	}
	return "UNKNOWN"
}

// String names the policy as ros2 tools do.
func (d Durability) String() string {
	switch d {
	case DurabilitySystemDefault:
		return "SYSTEM_DEFAULT"
	case DurabilityTransientLocal:
		return "TRANSIENT_LOCAL"
	case DurabilityVolatile:
		return "VOLATILE"
	}
	return "UNKNOWN"
}

// String names the policy as ros2 tools do.
func (l Liveliness) String() string {
	switch l {
	case LivelinessSystemDefault:
		return "SYSTEM_DEFAULT"
	case LivelinessAutomatic:
		return "AUTOMATIC"
	case LivelinessManualByTopic:
		return "MANUAL_BY_TOPIC"
	}
	return "UNKNOWN"
}
