package velmanode

import (
	"context"
	"fmt"
	"time"

	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"

	"github.com/fsmnodes/fsmnodes/internal/fsm/fsmnode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/subsys"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

// Bridge is the velma_core node: it declares the parameters, owns the
// Runner and serves the ROS interface. Hooks of the runner publish from the
// loop goroutine; services and timers run on the node's callback goroutine.
type Bridge struct {
	node   *ros.Node
	runner *Runner

	jointStates *ros.Publisher[sensor_msgs_msg.JointState]
	status      *ros.Publisher[velma_msgs_msg.Status]
	bodyState   *ros.Publisher[std_msgs_msg.String]
	csState     *ros.Publisher[std_msgs_msg.String]

	js sensor_msgs_msg.JointState // reused by the status timer
	st velma_msgs_msg.Status

	// body and cs follow the machines for the FSM introspection
	// (EnableFSM); nil without it. Set before the loop starts.
	body, cs *fsmnode.Machine
}

// EnableFSM makes the bridge report ve_body's and cs's states of every
// iteration to p's machines velma.BodyMachine and velma.CSMachine. Call it
// before Run.
func (b *Bridge) EnableFSM(p *fsmnode.Publisher) {
	b.body, b.cs = p.Machine(velma.BodyMachine), p.Machine(velma.CSMachine)
}

// Reasons given in the descriptors of the read-only parameters.
const (
	whyStart  = "the agent and the simulator are built at start-up"
	whyRemote = "cs runs in velma_core_cs; set it there"
)

// liveCS names the cs parameters that may change while cs runs.
var liveCS = map[string]func(t *velma.CSTuning) *float64{
	"cs.safe_stiffness":    func(t *velma.CSTuning) *float64 { return &t.SafeStiffness },
	"cs.safe_damping":      func(t *velma.CSTuning) *float64 { return &t.SafeDamping },
	"cs.head_max_velocity": func(t *velma.CSTuning) *float64 { return &t.HeadMaxVelocity },
}

// DeclareParams declares every parameter of Params on n (defaults from
// DefaultParams, overridden by --params-file and -p) read-only and returns
// the validated result.
func DeclareParams(n *ros.Node) (Params, error) {
	p, _, err := declareParams(n, false)
	return p, err
}

// declareParams declares the parameters; with runsCS the cs tuning
// (cs.safe_stiffness, cs.safe_damping, cs.head_max_velocity) is live, one
// group checked against the whole cs configuration, which the loop reads.
// Without runsCS everything is read-only (live is nil).
func declareParams(n *ros.Node, runsCS bool) (p Params, live *param.Group[velma.CSTuning], err error) {
	p = DefaultParams()
	d := ros.NewDeclarer(n)
	var liveFields []param.GroupField[velma.CSTuning]
	for _, name := range ParamNames() {
		def, _ := p.Get(name)
		if field, ok := liveCS[name]; ok && runsCS {
			liveFields = append(liveFields, param.Field(name, field, param.Descriptor{
				Description: "cs parameter, live: applies at the next iteration of the 500 Hz loop"}))
			continue
		}
		why := whyStart
		if _, ok := liveCS[name]; ok {
			why = whyRemote
		}
		v, err := param.FromAny(def)
		if err != nil {
			return p, nil, err
		}
		got, err := d.Store().Declare(name, v, param.ReadOnly("velma_core parameter (see params/velma.yaml)", why))
		if err != nil {
			d.Fail(err)
			break
		}
		var x any
		switch got.Type() {
		case param.TypeDouble:
			x = got.Double()
		case param.TypeInteger:
			x = got.Integer()
		case param.TypeString:
			x = got.Str()
		case param.TypeDoubleArray:
			x = got.Doubles()
		default:
			return p, nil, fmt.Errorf("parameter %s: unexpected type %v", name, got.Type())
		}
		if err := p.Set(name, x); err != nil {
			return p, nil, err
		}
	}
	if runsCS && d.Err() == nil {
		base := p.Agent.CS // with the read-only parameters' values
		period := time.Duration(p.Period * float64(time.Second))
		live = param.DeclareGroup(d, base.Tuning(), func(t velma.CSTuning) error {
			cfg := base.WithTuning(t)
			cfg.Period = period
			return cfg.Validate()
		}, liveFields...)
		p.Agent.CS = base.WithTuning(live.Get())
	}
	if err := d.Err(); err != nil {
		return p, nil, err
	}
	if err := p.Validate(); err != nil {
		return p, nil, err
	}
	return p, live, nil
}

// NewBridge builds the node's interface on n. Call Run to start the loop.
func NewBridge(n *ros.Node) (*Bridge, error) { return newBridge(n, nil) }

// NewInterface builds the same interface for the ROS interface process
// (velma_task_cs_ros_interface): its runner talks to velma_core_cs through
// c instead of running the agent. Run follows cs's status.
func NewInterface(n *ros.Node, c *subsys.Client) (*Bridge, error) { return newBridge(n, c) }

func newBridge(n *ros.Node, remote *subsys.Client) (*Bridge, error) {
	p, live, err := declareParams(n, remote == nil)
	if err != nil {
		return nil, err
	}
	b := &Bridge{node: n}
	if b.jointStates, err = ros.NewPublisher[sensor_msgs_msg.JointState](n, "joint_states", ros.QoSDefault); err != nil {
		return nil, err
	}
	if b.status, err = ros.NewPublisher[velma_msgs_msg.Status](n, "~/status", ros.QoSDefault); err != nil {
		return nil, err
	}
	if b.bodyState, err = ros.NewPublisher[std_msgs_msg.String](n, "~/ve_body/state", ros.QoSLatched); err != nil {
		return nil, err
	}
	if b.csState, err = ros.NewPublisher[std_msgs_msg.String](n, "~/cs/state", ros.QoSLatched); err != nil {
		return nil, err
	}
	log := n.Logger()
	hooks := Hooks{
		CSState: func(s velma.CSState) {
			if err := b.csState.Publish(&std_msgs_msg.String{Data: s.String()}); err != nil {
				log.Warnf("publish cs state: %v", err)
			}
		},
		BodyState: func(s velma.BodyState) {
			if err := b.bodyState.Publish(&std_msgs_msg.String{Data: s.String()}); err != nil {
				log.Warnf("publish ve_body state: %v", err)
			}
		},
		Iteration: func(afterStatus, body velma.BodyState, cs velma.CSState) {
			if b.body == nil {
				return
			}
			b.body.Observe(afterStatus.String(), "")
			b.body.Observe(body.String(), "")
			b.cs.Observe(cs.String(), "")
		},
		CSLost: func(string) {
			if err := b.csState.Publish(&std_msgs_msg.String{Data: CSStateUnknown}); err != nil {
				log.Warnf("publish cs state: %v", err)
			}
		},
	}
	if remote != nil {
		b.runner, err = NewRemoteRunner(p, hooks, remote)
	} else {
		b.runner, err = NewRunner(p, velma.RealClock{}, hooks)
		if err == nil {
			b.runner.SetTuner(live.Get)
		}
	}
	if err != nil {
		return nil, err
	}
	period := time.Duration(float64(time.Second) / p.Interface.StatusRate)
	if _, err := n.NewWallTimer(period, b.publishStatus); err != nil {
		return nil, err
	}
	if err := b.services(); err != nil {
		return nil, err
	}
	if err := b.actions(); err != nil {
		return nil, err
	}
	return b, nil
}

// Runner returns the bridge's runner.
func (b *Bridge) Runner() *Runner { return b.runner }

// Run runs the 500 Hz loop until ctx is done and logs its statistics.
func (b *Bridge) Run(ctx context.Context) error {
	err := b.runner.Run(ctx)
	b.node.Logger().Infof("control loop stopped: %v", b.runner.Snapshot().Loop)
	return err
}

// CSStateUnknown is what ~/cs/state says while the ROS interface process
// hears nothing from velma_core_cs: its last state is no longer known.
const CSStateUnknown = "unknown (no status from velma_core_cs)"

func (b *Bridge) publishStatus() {
	snap := b.runner.Snapshot()
	if snap.Report.Iteration == 0 || (snap.Stale && !snap.BodyOnly) {
		return // nothing yet, or nobody left to ask: old joint states would mislead
	}
	stamp := builtin_interfaces_msg.TimeOf(b.node.Clock().Now())
	JointStateOf(&snap, stamp, &b.js)
	if err := b.jointStates.Publish(&b.js); err != nil {
		b.node.Logger().Warnf("publish joint states: %v", err)
	}
	if snap.Stale {
		return // ~/status is mostly cs's (its state, trajectories, wrists): paused while cs is gone
	}
	StatusOf(&snap, stamp, &b.st)
	if err := b.status.Publish(&b.st); err != nil {
		b.node.Logger().Warnf("publish status: %v", err)
	}
}

func trigger(ok bool, msg string) *std_srvs_srv.Trigger_Response {
	return &std_srvs_srv.Trigger_Response{Success: ok, Message: msg}
}

// transparent explains why commands cannot reach the effectors, or "".
func transparent(s *Snapshot) string {
	if s.Stale {
		return "no status from velma_core_cs: the control subsystem is not running"
	}
	if s.Report.BodyState.IsSafe() || s.CS.State == velma.CSIdle {
		return fmt.Sprintf("ve_body is %v and cs is %v: commands do not reach the effectors yet", s.Report.BodyState, s.CS.State)
	}
	return ""
}

func (b *Bridge) services() error {
	type handler = func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error)
	svcs := map[string]handler{
		"~/relax": func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
			snap := b.runner.Snapshot()
			if why := transparent(&snap); why != "" {
				return trigger(false, why), nil
			}
			if !snap.CS.MotorsReady {
				return trigger(false, "motors not ready: call ~/motors/enable, ~/motors/hp/home and ~/motors/ht/home"), nil
			}
			b.runner.Submit(&velma.TaskCommand{Relax: true})
			return trigger(true, "relax requested"), nil
		},
		"~/motors/enable": func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
			snap := b.runner.Snapshot()
			if why := transparent(&snap); why != "" {
				return trigger(false, why), nil
			}
			b.runner.Submit(&velma.TaskCommand{Motors: velma.MotorRequests{TorsoEnable: true, HeadPanEnable: true, HeadTiltEnable: true}})
			return trigger(true, "enable requested for torso, head pan and head tilt"), nil
		},
		"~/motors/hp/home": b.home(0),
		"~/motors/ht/home": b.home(1),
	}
	for name, h := range svcs {
		if _, err := ros.NewService(b.node, name, std_srvs_srv.Trigger, h); err != nil {
			return err
		}
	}
	return nil
}

func (b *Bridge) home(i int) func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
	return func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
		snap := b.runner.Snapshot()
		if why := transparent(&snap); why != "" {
			return trigger(false, why), nil
		}
		m, name := &snap.Report.Status.HeadPan, "head pan"
		req := velma.MotorRequests{HeadPanHome: true}
		if i == 1 {
			m, name = &snap.Report.Status.HeadTilt, "head tilt"
			req = velma.MotorRequests{HeadTiltHome: true}
		}
		if !m.Enabled {
			return trigger(false, name+" motor is not enabled: call ~/motors/enable first"), nil
		}
		b.runner.Submit(&velma.TaskCommand{Motors: req})
		return trigger(true, name+" homing started"), nil
	}
}
