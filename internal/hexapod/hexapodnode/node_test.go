package hexapodnode

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
)

// yamlOverrides reads the hexapod_controller block of params/hexapod.yaml
// into parameter overrides with nested keys joined by dots.
func yamlOverrides(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../../../params/hexapod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			name := prefix + k
			switch x := v.(type) {
			case map[string]any:
				walk(name+".", x)
			case int:
				out[name] = int64(x)
			case float64, string:
				out[name] = x
			case []any:
				switch x[0].(type) {
				case int:
					var l []int64
					for _, e := range x {
						l = append(l, int64(e.(int)))
					}
					out[name] = l
				case float64:
					var l []float64
					for _, e := range x {
						f, ok := e.(float64)
						if !ok {
							t.Fatalf("%s mixes ints and floats", name)
						}
						l = append(l, f)
					}
					out[name] = l
				case string:
					var l []string
					for _, e := range x {
						l = append(l, e.(string))
					}
					out[name] = l
				}
			default:
				t.Fatalf("%s: unexpected YAML value %T", name, v)
			}
		}
	}
	walk("", doc["hexapod_controller"]["ros__parameters"])
	return out
}

// commentedEntries returns the top-level parameters that params/hexapod.yaml
// documents as commented-out entries ("    # name: value  # [read-only]"),
// left out so that a launch argument can set them (a node's own entry in
// a params file would win over it).
func commentedEntries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../../params/hexapod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		after, ok := strings.CutPrefix(line, "    # ")
		if !ok || !(strings.Contains(after, "[live]") || strings.Contains(after, "[read-only]")) {
			continue
		}
		if k, _, ok := strings.Cut(after, ":"); ok && !strings.ContainsAny(k, " (") {
			out = append(out, k)
		}
	}
	return out
}

// declarer returns a Declarer over a bare parameter store with overrides
// (Go values of the parameter types), as a node's --params-file gives.
func declarer(t *testing.T, over map[string]any) (*param.Declarer, *param.Store) {
	t.Helper()
	ov := map[string]param.Value{}
	for k, v := range over {
		x, err := param.FromAny(v)
		if err != nil {
			t.Fatalf("override %s: %v", k, err)
		}
		ov[k] = x
	}
	s := param.NewStore(param.StoreOptions{Overrides: ov})
	return param.NewDeclarer(s, nil), s
}

// loadSettings is LoadSettings over a bare store with overrides.
func loadSettings(t *testing.T, over map[string]any) (Settings, error) {
	t.Helper()
	d, _ := declarer(t, over)
	return LoadSettings(d)
}

func TestParamsFile_MatchesDeclaredParametersAndDefaults(t *testing.T) {
	def, defStore := declarer(t, nil)
	want, err := LoadSettings(def)
	if err != nil {
		t.Fatal(err)
	}
	over := yamlOverrides(t)
	got, err := loadSettings(t, over)
	if err != nil {
		t.Fatalf("params/hexapod.yaml: %v", err)
	}
	got.Live, want.Live = nil, nil // handles, compared through the values
	declared := defStore.Names()
	var inFile []string
	for k := range over {
		inFile = append(inFile, k)
	}
	inFile = append(inFile, commentedEntries(t)...)
	sort.Strings(declared)
	sort.Strings(inFile)
	if !reflect.DeepEqual(declared, inFile) {
		t.Fatalf("declared parameters and params/hexapod.yaml differ:\ndeclared %v\nfile     %v", declared, inFile)
	}
	// the file repeats the defaults (INIT_COXA_ANGLE goes through degrees)
	for i := range got.Controller.Geometry.InitCoxaAngle {
		if math.Abs(got.Controller.Geometry.InitCoxaAngle[i]-want.Controller.Geometry.InitCoxaAngle[i]) > 1e-15 {
			t.Fatalf("INIT_COXA_ANGLE differs")
		}
	}
	got.Controller.Geometry.InitCoxaAngle = want.Controller.Geometry.InitCoxaAngle
	want.Controller.Geometry.InitCoxaAngle = got.Controller.Geometry.InitCoxaAngle
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("params/hexapod.yaml differs from the defaults:\nfile     %+v\ndefaults %+v", got, want)
	}
	if want.ServoDriver != "sim" || want.CmdVelTimeout != 500*time.Millisecond || want.JoyTimeout != 500*time.Millisecond || want.Servos.Servos[0].ID != 8 ||
		want.Servos.Servos[17].Name != "TIBIA_LF" || want.Servos.Servos[17].Min != 54 {
		t.Fatalf("defaults: %+v", want)
	}
}

func TestLoadSettings_RejectsBadParameters(t *testing.T) {
	cases := map[string]struct {
		over map[string]any
		want string
	}{
		"ThreeLegs":       {map[string]any{"NUMBER_OF_LEGS": int64(3)}, "NUMBER_OF_LEGS"},
		"FiveAngles":      {map[string]any{"INIT_COXA_ANGLE": []float64{1, 2, 3, 4, 5}}, "INIT_COXA_ANGLE"},
		"NaNFemur":        {map[string]any{"FEMUR_LENGTH": math.NaN()}, "FEMUR_LENGTH"},
		"WrongType":       {map[string]any{"SUB_STEPS": 50.0}, "SUB_STEPS"},
		"ShortHalfCycle":  {map[string]any{"SUB_STEPS": int64(10)}, "SubSteps"},
		"BadDriver":       {map[string]any{"servo.driver": "can"}, "servo.driver"},
		"NegativeTimeout": {map[string]any{"cmd_vel_timeout": -1.0}, "cmd_vel_timeout"},
		"SeventeenNames":  {map[string]any{"SERVO_NAMES": hexapod.JointNames()[:17]}, "SERVO_NAMES"},
		"ShortServoRow":   {map[string]any{"COXA_RM": []int64{3, 14, 1024, 512}}, "COXA_RM"},
		"DuplicateID": {map[string]any{"servo.driver": "dynamixel",
			"FEMUR_LF": []int64{16, 8, 1024, 512, 300, 1, 0}}, "already used"},
		"NegativeButton": {map[string]any{"joy.button_start_stop": int64(-2)}, "StartStop"},
		"ZeroJoyTimeout": {map[string]any{"joy.timeout": 0.0}, "joy.timeout"},
		"NaNJoyTimeout":  {map[string]any{"joy.timeout": math.NaN()}, "joy.timeout"},
		"HugeJoyTimeout": {map[string]any{"joy.timeout": 120.0}, "joy.timeout"},
		"ZeroMaxLinear":  {map[string]any{"max_linear_velocity": 0.0}, "max_linear_velocity"},
		"NegMaxAngular":  {map[string]any{"max_angular_velocity": -1.0}, "max_angular_velocity"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := loadSettings(t, c.over)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LoadSettings = %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

type logRec struct{ lines []string }

func (l *logRec) Infof(f string, a ...any)  { l.lines = append(l.lines, "I "+fmt.Sprintf(f, a...)) }
func (l *logRec) Warnf(f string, a ...any)  { l.lines = append(l.lines, "W "+fmt.Sprintf(f, a...)) }
func (l *logRec) Errorf(f string, a ...any) { l.lines = append(l.lines, "E "+fmt.Sprintf(f, a...)) }

func newTestAdapter(t *testing.T) (*Adapter, *logRec) {
	t.Helper()
	s, err := loadSettings(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := &logRec{}
	a, err := NewAdapter(s, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	return a, log
}

func TestAdapter_ServicesStatesAndCmdVel(t *testing.T) {
	a, log := newTestAdapter(t)
	now := time.Unix(5000, 0)
	tick := func() TickResult {
		now = now.Add(10 * time.Millisecond)
		return a.Tick(now)
	}
	var states []string
	record := func(r TickResult) {
		if r.StateChanged {
			states = append(states, r.State)
		}
	}
	r := tick()
	record(r)
	if len(r.Names) != 18 || r.Names[0] != "COXA_RR" || len(r.Positions) != 18 {
		t.Fatalf("joint state %v %v", r.Names, r.Positions)
	}
	if ok, msg := a.Command(hexapod.CmdStandUp); ok || !strings.Contains(msg, "not started") {
		t.Fatalf("stand_up while idle: %v %q", ok, msg)
	}
	if ok, msg := a.Command(hexapod.CmdStartStop); !ok || msg != "Start" {
		t.Fatalf("start_stop: %v %q", ok, msg)
	}
	record(tick())
	if ok, _ := a.Command(hexapod.CmdStandUp); !ok {
		t.Fatal("stand_up refused")
	}
	for i := 0; i < 100; i++ {
		record(tick())
	}
	if ok, msg := a.Command(hexapod.CmdStartStop); ok || !strings.Contains(msg, "sit down first") {
		t.Fatalf("start_stop while up: %v %q", ok, msg)
	}
	if err := a.CmdVel([3]float64{math.NaN()}, [3]float64{}, now); err == nil {
		t.Fatal("NaN cmd_vel accepted")
	}
	if err := a.CmdVel([3]float64{0.1}, [3]float64{0, math.Inf(1), 0}, now); err == nil {
		t.Fatal("Inf angular.y accepted")
	}
	if err := a.CmdVel([3]float64{0.1}, [3]float64{}, now); err != nil {
		t.Fatal(err)
	}
	before := tick().Positions
	moving := 0
	for i := 0; i < 40; i++ { // 0.4 s < cmd_vel_timeout
		p := tick().Positions
		if !reflect.DeepEqual(p, before) {
			moving++
		}
		before = p
	}
	if moving < 35 || a.ctrl.State() != hexapod.Walking {
		t.Fatalf("walking: %d moving ticks, state %v", moving, a.ctrl.State())
	}
	// cmd_vel stops arriving: after the timeout the gait comes back to standing
	if !a.vel.At(now.Add(200 * time.Millisecond)).IsZero() {
		t.Fatal("cmd_vel still in force after the timeout")
	}
	a.Command(hexapod.CmdSitDown)
	for i := 0; i < 400 && a.State() != hexapod.Sitting; i++ {
		record(tick())
	}
	want := []string{"Idle", "Sitting", "Standing_up", "Walking", "Sitting_down", "Sitting"}
	if !reflect.DeepEqual(states, want) {
		t.Fatalf("states %v, want %v", states, want)
	}
	if !strings.Contains(strings.Join(log.lines, "\n"), "W cmd_vel rejected: linear.x is NaN") {
		t.Fatalf("no warning for NaN cmd_vel: %v", log.lines)
	}
}

func TestAdapter_JoyStartsAndWalks(t *testing.T) {
	a, _ := newTestAdapter(t)
	now := time.Unix(100, 0)
	btn := func(i int) []int32 { b := make([]int32, 11); b[i] = 1; return b }
	if err := a.Joy(hexapod.Joy{Stamp: 100, Axes: make([]float32, 8), Buttons: btn(7)}, now); err != nil {
		t.Fatal(err)
	}
	if !a.ctrl.Flags().Started {
		t.Fatal("Start button did not start")
	}
	a.Tick(now)
	a.Joy(hexapod.Joy{Stamp: 100.1, Axes: make([]float32, 8), Buttons: make([]int32, 11)}, now)
	// zero stamp: the receive time is used for the debounce
	if err := a.Joy(hexapod.Joy{Axes: make([]float32, 8), Buttons: btn(0)}, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if !a.ctrl.Flags().StandUp {
		t.Fatal("A did not stand up")
	}
	axes := make([]float32, 8)
	axes[1] = float32(math.NaN())
	if err := a.Joy(hexapod.Joy{Stamp: 102, Axes: axes, Buttons: btn(0)}, now.Add(2*time.Second)); err == nil {
		t.Fatal("NaN axis accepted")
	}
}

// TestAdapter_HeldStickKeepsWalking: a stick republished at 20 Hz (the joy
// driver's autorepeat) keeps the robot walking for as long as it is held;
// releasing it stops the body at once, and a joy driver that goes silent
// with the stick held stops it after joy.timeout.
func TestAdapter_HeldStickKeepsWalking(t *testing.T) {
	a, _ := newTestAdapter(t)
	now := time.Unix(100, 0)
	tick := func() TickResult {
		now = now.Add(10 * time.Millisecond)
		return a.Tick(now)
	}
	a.Command(hexapod.CmdStartStop)
	a.Command(hexapod.CmdStandUp)
	for i := 0; i < 200 && a.State() != hexapod.Walking; i++ {
		tick()
	}
	if a.State() != hexapod.Walking {
		t.Fatalf("state %v, want Walking", a.State())
	}
	fwd := make([]float32, 8)
	fwd[1] = 1
	joy := func(axes []float32) {
		if err := a.Joy(hexapod.Joy{Axes: axes, Buttons: make([]int32, 11)}, now); err != nil {
			t.Fatal(err)
		}
	}
	// 5 s held, one message every 50 ms: the commanded velocity never
	// lapses and the joints keep moving.
	still := 0
	prev := tick().Positions
	for i := 0; i < 500; i++ {
		if i%5 == 0 {
			joy(fwd)
		}
		if v := a.vel.At(now); v.X <= 0 {
			t.Fatalf("after %d ms held: velocity %+v", i*10, v)
		}
		p := tick().Positions
		// (the gait leaves Standing on the first tick with a command)
		if i > 0 && reflect.DeepEqual(p, prev) {
			t.Logf("no joint motion at tick %d", i)
			still++
		}
		prev = p
	}
	if still > 0 || a.State() != hexapod.Walking {
		t.Fatalf("held stick: %d ticks without joint motion, state %v", still, a.State())
	}
	// Release: the centred stick stops the body on the next tick.
	joy(make([]float32, 8))
	if v := a.vel.At(now); !v.IsZero() {
		t.Fatalf("released: velocity %+v", v)
	}
	// Held again, then the driver dies: the stick lapses after joy.timeout.
	joy(fwd)
	if v := a.vel.At(now.Add(DefaultTestJoyTimeout)); v.X <= 0 {
		t.Fatalf("within joy.timeout: %+v", v)
	}
	if v := a.vel.At(now.Add(DefaultTestJoyTimeout + time.Millisecond)); !v.IsZero() {
		t.Fatalf("after joy.timeout: %+v", v)
	}
}

// DefaultTestJoyTimeout is joy.timeout of params/hexapod.yaml.
const DefaultTestJoyTimeout = 500 * time.Millisecond

// Issue 13: absurd finite commands are clamped to max_linear_velocity and
// max_angular_velocity, said once per episode and counted every time.
func TestAdapter_CmdVelAndJoyClampedToLimits(t *testing.T) {
	s, err := loadSettings(t, map[string]any{"max_linear_velocity": 0.1, "max_angular_velocity": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	log := &logRec{}
	a, err := NewAdapter(s, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(100, 0)
	for i := range 10 {
		if err := a.CmdVel([3]float64{1e308, -3}, [3]float64{2: -1e300}, now.Add(time.Duration(i)*10*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if v := a.vel.At(now.Add(100 * time.Millisecond)); v != (hexapod.Velocity{X: 0.1, Y: -0.1, Yaw: -0.5}) {
		t.Errorf("velocity in force %+v, want it clamped to (0.1, -0.1, -0.5)", v)
	}
	var warns []string
	for _, l := range log.lines {
		if strings.HasPrefix(l, "W ") {
			warns = append(warns, l)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "cmd_vel clamped: linear.x = 1e+308 beyond max_linear_velocity 0.1") {
		t.Errorf("warnings %q, want one naming the clamp", warns)
	}
	// the joystick's velocity is limited the same way
	axes := make([]float32, 8)
	axes[1] = 1
	if err := a.Joy(hexapod.Joy{Stamp: 200, Axes: axes, Buttons: make([]int32, 11)}, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if v := a.vel.At(now.Add(time.Second)); math.Abs(v.X) > 0.1 {
		t.Errorf("joystick velocity %+v beyond max_linear_velocity 0.1", v)
	}
	if rej, cl := a.Counts(); rej != 0 || cl != 11 {
		t.Errorf("counts rejected %d clamped %d, want 0 and 11", rej, cl)
	}
}
