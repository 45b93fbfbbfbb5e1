package joy

import (
	"fmt"
	"math"
)

// TeleopConfig maps joystick axes onto a velocity command, with the
// parameter names and defaults of teleop_twist_joy.
type TeleopConfig struct {
	RequireEnableButton bool    // require_enable_button (true)
	EnableButton        int     // enable_button (0)
	TurboButton         int     // enable_turbo_button (-1: none)
	AxisLinearX         int     // axis_linear.x (1)
	ScaleLinearX        float64 // scale_linear.x (0.5)
	TurboLinearX        float64 // scale_linear_turbo.x (1.0)
	AxisAngularYaw      int     // axis_angular.yaw (0)
	ScaleAngularYaw     float64 // scale_angular.yaw (0.5)
	TurboAngularYaw     float64 // scale_angular_turbo.yaw (1.0)
}

// DefaultTeleop returns teleop_twist_joy's defaults.
func DefaultTeleop() TeleopConfig {
	return TeleopConfig{RequireEnableButton: true, EnableButton: 0, TurboButton: -1,
		AxisLinearX: 1, ScaleLinearX: 0.5, TurboLinearX: 1.0,
		AxisAngularYaw: 0, ScaleAngularYaw: 0.5, TurboAngularYaw: 1.0}
}

// Validate checks the configuration.
func (c TeleopConfig) Validate() error {
	for _, s := range []float64{c.ScaleLinearX, c.TurboLinearX, c.ScaleAngularYaw, c.TurboAngularYaw} {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("joy: teleop scale %v is not finite", s)
		}
	}
	if c.RequireEnableButton && c.EnableButton < 0 {
		return fmt.Errorf("joy: enable_button %d must be >= 0 when required", c.EnableButton)
	}
	return nil
}

// Teleop turns joystick states into velocity commands.
type Teleop struct {
	cfg  TeleopConfig
	sent bool // a non-zero command was sent since the enable button went down
}

// NewTeleop returns a Teleop after validating cfg.
func NewTeleop(cfg TeleopConfig) (*Teleop, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Teleop{cfg: cfg}, nil
}

// SetConfig changes the configuration while running (the node's live
// scales); an invalid one is refused with the reason and changes nothing.
// It applies to the next joystick state.
func (t *Teleop) SetConfig(cfg TeleopConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	t.cfg = cfg
	return nil
}

// Update returns the command for state s and whether to publish it. While
// enabled every state yields a command; when the enable button is released
// one zero command is published, then nothing (so another source may drive
// the robot), as teleop_twist_joy does.
func (t *Teleop) Update(s State) (linear, angular float64, publish bool) {
	pressed := func(i int) bool { return i >= 0 && i < len(s.Buttons) && s.Buttons[i] != 0 }
	axis := func(i int) float64 {
		if i < 0 || i >= len(s.Axes) {
			return 0
		}
		v := float64(s.Axes[i])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return v
	}
	turbo := pressed(t.cfg.TurboButton)
	if !t.cfg.RequireEnableButton || pressed(t.cfg.EnableButton) || turbo {
		ls, as := t.cfg.ScaleLinearX, t.cfg.ScaleAngularYaw
		if turbo {
			ls, as = t.cfg.TurboLinearX, t.cfg.TurboAngularYaw
		}
		t.sent = true
		return axis(t.cfg.AxisLinearX) * ls, axis(t.cfg.AxisAngularYaw) * as, true
	}
	if t.sent {
		t.sent = false
		return 0, 0, true
	}
	return 0, 0, false
}
