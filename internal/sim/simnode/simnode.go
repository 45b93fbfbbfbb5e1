// Package simnode adapts the built-in simulators of internal/sim to ROS 2:
// the differential-drive world (diff_drive_sim), the Nav2-compatible
// navigator (simple_navigator) and the frontier detector
// (frontier_detector). The simulation itself stays in internal/sim; this
// package only converts messages and wires topics, services and actions.
package simnode

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

func header(t time.Time, frame string) std_msgs_msg.Header {
	return std_msgs_msg.Header{Stamp: builtin_interfaces_msg.TimeOf(t), FrameId: frame}
}

// yawQuat returns the quaternion of a rotation by yaw about z.
func yawQuat(yaw float64) geometry_msgs_msg.Quaternion {
	return geometry_msgs_msg.Quaternion{Z: math.Sin(yaw / 2), W: math.Cos(yaw / 2)}
}

// quatYaw returns the yaw of a quaternion (rotation about z).
func quatYaw(q geometry_msgs_msg.Quaternion) float64 {
	return math.Atan2(2*(q.W*q.Z+q.X*q.Y), 1-2*(q.Y*q.Y+q.Z*q.Z))
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// gridToMsg converts a grid to nav_msgs/OccupancyGrid.
func gridToMsg(g *sim.Grid, t time.Time, frame string) *nav_msgs_msg.OccupancyGrid {
	m := &nav_msgs_msg.OccupancyGrid{Header: header(t, frame)}
	m.Info.MapLoadTime = builtin_interfaces_msg.TimeOf(t)
	m.Info.Resolution = float32(g.Resolution)
	m.Info.Width, m.Info.Height = uint32(g.Width), uint32(g.Height)
	m.Info.Origin.Position = geometry_msgs_msg.Point{X: g.OriginX, Y: g.OriginY}
	m.Info.Origin.Orientation.W = 1
	m.Data = append([]int8(nil), g.Cells...)
	return m
}

// gridFromMsg converts nav_msgs/OccupancyGrid to a grid, rejecting
// inconsistent or non-finite maps. A rotated map origin is not supported.
func gridFromMsg(m *nav_msgs_msg.OccupancyGrid) (*sim.Grid, error) {
	w, h := int(m.Info.Width), int(m.Info.Height)
	if w*h != len(m.Data) {
		return nil, fmt.Errorf("map is %dx%d but has %d cells", w, h, len(m.Data))
	}
	o := m.Info.Origin
	if !finite(o.Position.X, o.Position.Y, float64(m.Info.Resolution)) {
		return nil, errors.New("map origin or resolution is not finite")
	}
	if math.Abs(quatYaw(o.Orientation)) > 1e-6 {
		return nil, errors.New("rotated map origins are not supported")
	}
	g, err := sim.NewGrid(w, h, float64(m.Info.Resolution), o.Position.X, o.Position.Y, sim.Unknown)
	if err != nil {
		return nil, err
	}
	for i, v := range m.Data {
		switch {
		case v < 0:
			g.Cells[i] = sim.Unknown
		case v >= 50:
			g.Cells[i] = sim.Occupied
		default:
			g.Cells[i] = sim.Free
		}
	}
	return g, nil
}

// startupOnly is the reason given in the descriptor of a parameter that is
// read once: such parameters are read-only, so a run-time set is refused
// instead of being reported as a success that changes nothing.
const startupOnly = "read at start-up: pass it with -p or a parameter file and restart the node to change it"

func declareFloat(n *ros.Node, name string, def float64, desc string) (float64, error) {
	return ros.DeclareParam(n, name, def, ros.ParamDescriptor{Description: desc, ReadOnly: true, AdditionalConstraints: startupOnly})
}

func declareString(n *ros.Node, name, def, desc string) (string, error) {
	return ros.DeclareParam(n, name, def, ros.ParamDescriptor{Description: desc, ReadOnly: true, AdditionalConstraints: startupOnly})
}

func declareBool(n *ros.Node, name string, def bool, desc string) (bool, error) {
	return ros.DeclareParam(n, name, def, ros.ParamDescriptor{Description: desc, ReadOnly: true, AdditionalConstraints: startupOnly})
}

// Names of the velocity limit parameters.
const (
	paramMaxLinear  = "max_linear_velocity"
	paramMaxAngular = "max_angular_velocity"
)

// declareLimits declares max_linear_velocity (m/s) and max_angular_velocity
// (rad/s) with defaults def. They may be changed at run time: a value that
// is not positive and finite is refused with the reason, an accepted
// change calls apply with both limits (on the node's callback goroutine).
func declareLimits(n *ros.Node, def cmdvel.Limits, what string, apply func(cmdvel.Limits)) (cmdvel.Limits, error) {
	n.OnSetParameters(func(ps []ros.Parameter) error {
		for _, p := range ps {
			if p.Name != paramMaxLinear && p.Name != paramMaxAngular {
				continue
			}
			if v := p.Value.Double(); !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("%s = %v: must be a positive finite number", p.Name, v)
			}
		}
		return nil
	})
	const constraints = "> 0; may be changed at run time"
	lin, err := ros.DeclareParam(n, paramMaxLinear, def.Linear, ros.ParamDescriptor{
		Description: "m/s: " + what + " is limited to ±this", AdditionalConstraints: constraints})
	if err != nil {
		return cmdvel.Limits{}, err
	}
	ang, err := ros.DeclareParam(n, paramMaxAngular, def.Angular, ros.ParamDescriptor{
		Description: "rad/s: " + what + " is limited to ±this", AdditionalConstraints: constraints})
	if err != nil {
		return cmdvel.Limits{}, err
	}
	n.OnParametersChanged(func(changed []ros.Parameter) {
		for _, p := range changed {
			if p.Name == paramMaxLinear || p.Name == paramMaxAngular {
				lin, err1 := n.ParamFloat64(paramMaxLinear)
				ang, err2 := n.ParamFloat64(paramMaxAngular)
				if err1 == nil && err2 == nil {
					apply(cmdvel.Limits{Linear: lin, Angular: ang})
				}
				return
			}
		}
	})
	return cmdvel.Limits{Linear: lin, Angular: ang}, nil
}

// twistOf converts a geometry_msgs/Twist.
func twistOf(m *geometry_msgs_msg.Twist) cmdvel.Twist {
	return cmdvel.Twist{Linear: [3]float64{m.Linear.X, m.Linear.Y, m.Linear.Z},
		Angular: [3]float64{m.Angular.X, m.Angular.Y, m.Angular.Z}}
}

func period(hz float64, name string) (time.Duration, error) {
	if !(hz > 0) || math.IsInf(hz, 0) {
		return 0, fmt.Errorf("parameter %s = %v: must be a positive rate in Hz", name, hz)
	}
	return time.Duration(float64(time.Second) / hz), nil
}
