package cmdvelnode

import (
	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
)

// Names of the velocity limit parameters.
const (
	ParamMaxLinear  = "max_linear_velocity"
	ParamMaxAngular = "max_angular_velocity"
)

// LimitRange is the range both limit parameters accept (then
// cmdvel.Limits.Validate: above 0 and finite).
var LimitRange = param.Floats(0, 1000)

// DeclareLimits is the one declaration of the live velocity limits
// max_linear_velocity (m/s) and max_angular_velocity (rad/s) of every node
// that limits velocity commands, with defaults def; what names the
// commands they clamp ("an input command", "cmd_vel"). The node's cycle
// takes a change with Changed and hands it to its guard or behaviour.
func DeclareLimits(d *param.Declarer, def cmdvel.Limits, what string) *param.Group[cmdvel.Limits] {
	return param.DeclareGroup(d, def, cmdvel.Limits.Validate,
		LimitFields(func(l *cmdvel.Limits) *cmdvel.Limits { return l }, what)...)
}

// LimitFields are the same two parameters as fields of a larger live
// configuration C (a behaviour's tuning that holds its limits), for
// param.DeclareGroup; C's validation must check the limits
// (cmdvel.Limits.Validate).
func LimitFields[C comparable](limits func(c *C) *cmdvel.Limits, what string) []param.GroupField[C] {
	return []param.GroupField[C]{
		param.Field(ParamMaxLinear, func(c *C) *float64 { return &limits(c).Linear }, param.Descriptor{
			Description: "m/s: each linear component of " + what + " is clamped to ±this (live)", FloatRange: LimitRange}),
		param.Field(ParamMaxAngular, func(c *C) *float64 { return &limits(c).Angular }, param.Descriptor{
			Description: "rad/s: each angular component of " + what + " is clamped to ±this (live)", FloatRange: LimitRange}),
	}
}
