package cli

import (
	"strconv"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// qosFlags are the --qos-* options of topic echo/pub/hz.
var qosFlags = flagSpec{"--qos-profile": true, "--qos-depth": true, "--qos-history": true,
	"--qos-reliability": true, "--qos-durability": true}

func addFlags(dst flagSpec, more flagSpec) flagSpec {
	for k, v := range more {
		dst[k] = v
	}
	return dst
}

// qosFromFlags builds the QoS of --qos-profile (default def) adjusted by
// the other --qos-* options. It reports which policies the user set so that
// echo can adapt the others to the publishers.
func qosFromFlags(p *parsed, def ros.QoS) (q ros.QoS, setRel, setDur bool, err error) {
	q = def
	switch v := p.get("", "--qos-profile"); v {
	case "":
	case "default", "system_default":
		if v == "default" {
			q = ros.QoSDefault
		} else {
			q = ros.QoSSystemDefault
		}
	case "sensor_data":
		q = ros.QoSSensorData
	case "services_default":
		q = ros.QoSServices
	case "parameters":
		q = ros.QoSParameters
	case "parameter_events":
		q = ros.QoSParameterEvents
	case "rosout_default":
		q = ros.QoSRosout
	default:
		return q, false, false, usagef("--qos-profile: %q is not one of default, system_default, sensor_data, services_default, parameters, parameter_events, rosout_default", v)
	}
	switch v := p.get("", "--qos-history"); v {
	case "":
	case "keep_last":
		q.History = ros.HistoryKeepLast
	case "keep_all":
		q.History = ros.HistoryKeepAll
	case "system_default":
		q.History = ros.HistorySystemDefault
	default:
		return q, false, false, usagef("--qos-history: %q is not one of keep_last, keep_all, system_default", v)
	}
	if v := p.get("", "--qos-depth"); v != "" {
		d, err := strconv.Atoi(v)
		if err != nil || d < 0 || d > 1<<20 {
			return q, false, false, usagef("--qos-depth: %q is not a depth (0 to 1048576)", v)
		}
		q.Depth = d
	}
	switch v := p.get("", "--qos-reliability"); v {
	case "":
	case "reliable":
		q.Reliability, setRel = ros.ReliabilityReliable, true
	case "best_effort":
		q.Reliability, setRel = ros.ReliabilityBestEffort, true
	case "system_default":
		q.Reliability, setRel = ros.ReliabilitySystemDefault, true
	default:
		return q, false, false, usagef("--qos-reliability: %q is not one of reliable, best_effort, system_default", v)
	}
	switch v := p.get("", "--qos-durability"); v {
	case "":
	case "transient_local":
		q.Durability, setDur = ros.DurabilityTransientLocal, true
	case "volatile":
		q.Durability, setDur = ros.DurabilityVolatile, true
	case "system_default":
		q.Durability, setDur = ros.DurabilitySystemDefault, true
	default:
		return q, false, false, usagef("--qos-durability: %q is not one of transient_local, volatile, system_default", v)
	}
	return q, setRel, setDur, nil
}

// adaptQoS picks reliability and durability for a subscription the way
// ros2 topic echo does: reliable only if every publisher is reliable,
// transient local only if every publisher is.
func adaptQoS(q ros.QoS, pubs []ros.EndpointInfo, setRel, setDur bool) ros.QoS {
	if len(pubs) == 0 {
		return q
	}
	allRel, allTL := true, true
	for _, e := range pubs {
		allRel = allRel && e.QoS.Reliability != ros.ReliabilityBestEffort
		allTL = allTL && e.QoS.Durability == ros.DurabilityTransientLocal
	}
	if !setRel {
		if allRel {
			q.Reliability = ros.ReliabilityReliable
		} else {
			q.Reliability = ros.ReliabilityBestEffort
		}
	}
	if !setDur {
		if allTL {
			q.Durability = ros.DurabilityTransientLocal
		} else {
			q.Durability = ros.DurabilityVolatile
		}
	}
	return q
}
