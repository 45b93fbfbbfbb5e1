// Package velmanode adapts the Velma core agent (package velma) and its effector
// simulator to ROS 2: parameters, the runner that owns the 500 Hz loop, the
// conversions between velma types and ROS messages, and the wiring of
// topics, services and actions for the velma_bridge executable (node name
// velma_core).
package velmanode

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/sim"
)

// Interface holds the ROS-side parameters.
type Interface struct {
	StateMaxRate      float64    // ~/ve_body/state at most this often [Hz]
	StatusRate        float64    // ~/status and /joint_states [Hz]
	JntPathTolerance  float64    // default joint path tolerance [rad]
	JntGoalTolerance  float64    // default joint goal tolerance [rad]
	GoalTimeTolerance float64    // default [s]
	CartPathTolerance [2]float64 // default position [m], rotation [rad]
	CartGoalTolerance [2]float64
}

// Params are all parameters of the velma_core node.
type Params struct {
	Period    float64 // control period [s]
	Effectors string  // "sim"
	Agent     velma.AgentConfig
	Sim       sim.Config
	Interface Interface
}

// DefaultParams returns the values of params/velma.yaml.
func DefaultParams() Params {
	return Params{
		Period:    0.002,
		Effectors: "sim",
		Agent:     velma.DefaultAgentConfig(),
		Sim:       sim.DefaultConfig(),
		Interface: Interface{
			StateMaxRate:      50,
			StatusRate:        50,
			JntPathTolerance:  0.0873,
			JntGoalTolerance:  0.0175,
			GoalTimeTolerance: 1,
			CartPathTolerance: [2]float64{0.05, 0.2},
			CartGoalTolerance: [2]float64{0.01, 0.05},
		},
	}
}

// paramDef binds one parameter name to a field.
type paramDef struct {
	get func(p *Params) any
	set func(p *Params, v any) error
}

func floatParam(f func(p *Params) *float64) paramDef {
	return paramDef{
		get: func(p *Params) any { return *f(p) },
		set: func(p *Params, v any) error {
			x, err := toFloat(v)
			if err != nil {
				return err
			}
			*f(p) = x
			return nil
		},
	}
}

func vecParam(n int, f func(p *Params) []float64) paramDef {
	return paramDef{
		get: func(p *Params) any { return append([]float64(nil), f(p)...) },
		set: func(p *Params, v any) error {
			xs, err := toFloats(v)
			if err != nil {
				return err
			}
			if len(xs) != n {
				return fmt.Errorf("%d values, want %d", len(xs), n)
			}
			copy(f(p), xs)
			return nil
		},
	}
}

var paramTable = map[string]paramDef{
	"period": floatParam(func(p *Params) *float64 { return &p.Period }),
	"effectors": {
		get: func(p *Params) any { return p.Effectors },
		set: func(p *Params, v any) error {
			s, ok := v.(string)
			if !ok || s != "sim" {
				return fmt.Errorf("%v: only \"sim\" is supported", v)
			}
			p.Effectors = s
			return nil
		},
	},
	"ve_body.safe_iterations": {
		get: func(p *Params) any { return int64(p.Agent.VeBody.SafeIterations) },
		set: func(p *Params, v any) error {
			x, err := toFloat(v)
			if err != nil || x != math.Trunc(x) || x < 0 || x > 1e6 {
				return fmt.Errorf("%v: want an integer 0…1000000", v)
			}
			p.Agent.VeBody.SafeIterations = int(x)
			return nil
		},
	},
	"ve_body.arm_damping":           vecParam(7, func(p *Params) []float64 { return p.Agent.VeBody.ArmDamping[:] }),
	"ve_body.torso_damping":         floatParam(func(p *Params) *float64 { return &p.Agent.VeBody.TorsoDamping }),
	"ve_body.arm_torque_limits":     vecParam(7, func(p *Params) []float64 { return p.Agent.VeBody.Limits.ArmTorque[:] }),
	"ve_body.torso_torque_limit":    floatParam(func(p *Params) *float64 { return &p.Agent.VeBody.Limits.TorsoTorque }),
	"ve_body.arm_position_limits":   vecParam(7, func(p *Params) []float64 { return p.Agent.VeBody.Limits.ArmQ[:] }),
	"cs.safe_stiffness":             floatParam(func(p *Params) *float64 { return &p.Agent.CS.SafeStiffness }),
	"cs.safe_damping":               floatParam(func(p *Params) *float64 { return &p.Agent.CS.SafeDamping }),
	"cs.jnt_stiffness":              vecParam(15, func(p *Params) []float64 { return p.Agent.CS.JntStiffness[:] }),
	"cs.jnt_damping":                floatParam(func(p *Params) *float64 { return &p.Agent.CS.JntDamping }),
	"cs.cart_stiffness":             vecParam(6, func(p *Params) []float64 { return p.Agent.CS.CartStiffness[:] }),
	"cs.cart_damping":               floatParam(func(p *Params) *float64 { return &p.Agent.CS.CartDamping }),
	"cs.collision_distance":         floatParam(func(p *Params) *float64 { return &p.Agent.CS.CollisionDistance }),
	"cs.repulse_distance":           floatParam(func(p *Params) *float64 { return &p.Agent.CS.RepulseDistance }),
	"cs.repulse_force":              floatParam(func(p *Params) *float64 { return &p.Agent.CS.RepulseForce }),
	"cs.repulse_damping":            vecParam(15, func(p *Params) []float64 { return p.Agent.CS.RepulseJntDamping[:] }),
	"cs.limit_range":                floatParam(func(p *Params) *float64 { return &p.Agent.CS.LimitRange }),
	"cs.limit_torque":               vecParam(15, func(p *Params) []float64 { return p.Agent.CS.LimitTorque[:] }),
	"cs.head_max_velocity":          floatParam(func(p *Params) *float64 { return &p.Agent.CS.HeadMaxVelocity }),
	"sim.initial_torso":             floatParam(func(p *Params) *float64 { return &p.Sim.InitialTorso }),
	"sim.initial_right":             vecParam(7, func(p *Params) []float64 { return p.Sim.InitialRight[:] }),
	"sim.initial_left":              vecParam(7, func(p *Params) []float64 { return p.Sim.InitialLeft[:] }),
	"sim.initial_head":              vecParam(2, func(p *Params) []float64 { return p.Sim.InitialHead[:] }),
	"sim.arm_viscous":               vecParam(7, func(p *Params) []float64 { return p.Sim.ArmViscous[:] }),
	"sim.arm_coulomb":               floatParam(func(p *Params) *float64 { return &p.Sim.ArmCoulomb }),
	"sim.torso_viscous":             floatParam(func(p *Params) *float64 { return &p.Sim.TorsoViscous }),
	"sim.torso_coulomb":             floatParam(func(p *Params) *float64 { return &p.Sim.TorsoCoulomb }),
	"interface.state_max_rate":      floatParam(func(p *Params) *float64 { return &p.Interface.StateMaxRate }),
	"interface.status_rate":         floatParam(func(p *Params) *float64 { return &p.Interface.StatusRate }),
	"interface.jnt_path_tolerance":  floatParam(func(p *Params) *float64 { return &p.Interface.JntPathTolerance }),
	"interface.jnt_goal_tolerance":  floatParam(func(p *Params) *float64 { return &p.Interface.JntGoalTolerance }),
	"interface.goal_time_tolerance": floatParam(func(p *Params) *float64 { return &p.Interface.GoalTimeTolerance }),
	"interface.cart_path_tolerance": vecParam(2, func(p *Params) []float64 { return p.Interface.CartPathTolerance[:] }),
	"interface.cart_goal_tolerance": vecParam(2, func(p *Params) []float64 { return p.Interface.CartGoalTolerance[:] }),
}

// ParamNames returns every parameter name, sorted.
func ParamNames() []string {
	names := make([]string, 0, len(paramTable))
	for n := range paramTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Get returns a parameter's value (float64, int64, string or []float64).
func (p *Params) Get(name string) (any, error) {
	pp, ok := paramTable[name]
	if !ok {
		return nil, fmt.Errorf("unknown parameter %q", name)
	}
	return pp.get(p), nil
}

// Set sets one parameter by name; the value is checked for type, length and
// finiteness (ranges are checked by Validate).
func (p *Params) Set(name string, v any) error {
	pp, ok := paramTable[name]
	if !ok {
		return fmt.Errorf("unknown parameter %q", name)
	}
	if err := pp.set(p, v); err != nil {
		return fmt.Errorf("parameter %s: %w", name, err)
	}
	return nil
}

// Validate checks the whole parameter set and derives the control periods.
func (p *Params) Validate() error {
	if !(p.Period >= 0.0005 && p.Period <= 0.05) {
		return fmt.Errorf("parameter period: %g s, want 0.0005…0.05", p.Period)
	}
	d := time.Duration(p.Period * float64(time.Second))
	p.Agent.CS.Period, p.Sim.Period = d, d
	if err := p.Agent.Validate(); err != nil {
		return err
	}
	if err := p.Sim.Validate(); err != nil {
		return err
	}
	i := p.Interface
	if !(i.StateMaxRate > 0 && i.StateMaxRate <= 1000) || !(i.StatusRate > 0 && i.StatusRate <= 1000) {
		return fmt.Errorf("parameter interface rates %g/%g Hz, want (0, 1000]", i.StateMaxRate, i.StatusRate)
	}
	for _, x := range []float64{i.JntPathTolerance, i.JntGoalTolerance, i.GoalTimeTolerance,
		i.CartPathTolerance[0], i.CartPathTolerance[1], i.CartGoalTolerance[0], i.CartGoalTolerance[1]} {
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("parameter interface tolerances must be finite and ≥ 0")
		}
	}
	return nil
}

func toFloat(v any) (float64, error) {
	var x float64
	switch t := v.(type) {
	case float64:
		x = t
	case float32:
		x = float64(t)
	case int:
		x = float64(t)
	case int64:
		x = float64(t)
	case int32:
		x = float64(t)
	default:
		return 0, fmt.Errorf("%v (%T) is not a number", v, v)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%v is not finite", x)
	}
	return x, nil
}

func toFloats(v any) ([]float64, error) {
	switch t := v.(type) {
	case []float64:
		for _, x := range t {
			if _, err := toFloat(x); err != nil {
				return nil, err
			}
		}
		return t, nil
	case []any:
		out := make([]float64, len(t))
		for i, e := range t {
			x, err := toFloat(e)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = x
		}
		return out, nil
	case []int64:
		out := make([]float64, len(t))
		for i, e := range t {
			out[i] = float64(e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%v (%T) is not a list of numbers", v, v)
}
