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

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
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

// DefaultMaxMapCells is the default of the parameter max_map_cells: 2000 ×
// 2000 cells (100 m square at 5 cm), far above the demo's 120 × 80.
const DefaultMaxMapCells = 4_000_000

// CounterMapsRejected counts /map messages a node refused (too large,
// inconsistent, non-finite).
const CounterMapsRejected = "maps_rejected"

// declareMapLimit declares max_map_cells, the bound of the maps a node
// takes from /map (read-only).
func declareMapLimit(d *param.Declarer) int {
	return int(param.Declare(d, "max_map_cells", int64(DefaultMaxMapCells), param.Descriptor{
		Description: "largest /map taken, in cells (width × height); a larger one is refused and counted as " +
			CounterMapsRejected + " (read-only: " + startupOnly + ")",
		ReadOnly: true, ReadOnlyReason: startupOnly, IntegerRange: param.Ints(1, 100_000_000)}, nil))
}

// subscribeMap subscribes to /map and hands every acceptable map, converted,
// to onGrid. A map of more than maxCells cells is refused before it is
// decoded when its sample is larger than such a map can be (the library
// counts it as oversized_samples), and after decoding by its width and
// height; refused maps are counted (maps_rejected) and logged once until a
// good map arrives.
func subscribeMap(n *ros.Node, maxCells int, onGrid func(*sim.Grid)) error {
	rejected := n.Counter(CounterMapsRejected)
	var bad bool
	_, err := ros.NewSubscription(n, sim.TopicMap, ros.QoSLatched, func(m *nav_msgs_msg.OccupancyGrid) {
		g, err := gridFromMsg(m, maxCells)
		if err != nil {
			rejected.Inc()
			if !bad {
				n.Logger().Warnf("ignoring /map: %v (said once until a good map arrives)", err)
			}
			bad = true
			return
		}
		bad = false
		onGrid(g)
	}, ros.WithMaxSampleSize(maxCells+mapOverhead))
	return err
}

// mapOverhead bounds the bytes of an OccupancyGrid besides its cells (the
// header with its frame id, the map info, the sequence length).
const mapOverhead = 64 << 10

// gridFromMsg converts nav_msgs/OccupancyGrid to a grid, rejecting
// inconsistent, non-finite and too large (more than maxCells cells) maps.
// A rotated map origin is not supported.
func gridFromMsg(m *nav_msgs_msg.OccupancyGrid, maxCells int) (*sim.Grid, error) {
	w, h := int(m.Info.Width), int(m.Info.Height)
	if w*h > maxCells {
		return nil, fmt.Errorf("map of %dx%d cells, more than max_map_cells %d", w, h, maxCells)
	}
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
const startupOnly = "read at start-up; pass it with -p or a parameter file and restart the node to change it"

// fixed returns the descriptor of a parameter read once at start-up.
func fixed(desc string) param.Descriptor { return param.ReadOnly(desc, startupOnly) }

// rate declares a read-only rate in Hz and returns its period.
func rate(d *param.Declarer, name string, def float64, desc string) time.Duration {
	hz := param.Declare(d, name, def, param.Descriptor{Description: desc + " (read-only: " + startupOnly + ")",
		ReadOnly: true, ReadOnlyReason: startupOnly, FloatRange: param.Floats(0, 10000)}, param.Frequency)
	if param.Frequency(hz) != nil {
		return time.Second // after an error Err reports
	}
	return param.Period(hz)
}
