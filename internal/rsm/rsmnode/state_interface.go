package rsmnode

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm/fsmnode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// StateInterfaceNodeName is the state machine's node name.
const StateInterfaceNodeName = "rsmNode"

// NavigatorFactory makes the Nav2 NavigateToPose client for the
// Navigation plugin; nil selects the built-in one (NewActionNavigator).
type NavigatorFactory func(ctx context.Context, n *ros.Node) (rsm.Navigator, error)

// StateInterfaceOptions are the optional parts of NewStateInterface.
type StateInterfaceOptions struct {
	// (optional) Navigator makes the Nav2 client; nil selects
	// NewActionNavigator.
	Navigator NavigatorFactory
	// (optional) Registry holds the plugin states that run in this
	// process; nil selects rsm.DefaultRegistry (the built-in ones).
	Registry *rsm.Registry
}

// SetupStateInterface is the setup of rsmNode with the built-in plugin
// states and navigator (NewStateInterface with no options).
func SetupStateInterface(ctx context.Context, n *ros.Node) error {
	_, err := NewStateInterface(ctx, n, StateInterfaceOptions{})
	return err
}

// NewStateInterface declares rsmNode's parameters and wires the state
// machine to n: subscriptions rsm/operationMode, rsm/simpleGoal,
// rsm/explorationGoals, rsm/failedGoals, rsm/goalObsolete,
// rsm/reverseMode; services rsm/startStopExploration,
// rsm/startStopWaypointFollowing, rsm/stop2DNavGoal, rsm/stateInfo; the
// rsm/stateInfo topic; clients of the service provider and of
// rsm/bootUpFinished; and the tick timer. ctx is passed to the states'
// service calls. The machine starts in Boot. A program that registers
// its own Go plugin states passes its registry in opts
// (rsmplugin.RunStateInterface does).
func NewStateInterface(ctx context.Context, n *ros.Node, opts StateInterfaceOptions) (*rsm.StateInterface, error) {
	navFactory := opts.Navigator
	log := n.Logger()
	d := ros.NewDeclarer(n)
	hz := declareRate(d)
	cfg, live := stateInterfaceConfig(d)
	modeFrom := param.Declare(d, "operation_mode_publisher", MuxNodeName, param.ReadOnly(
		"the node whose rsm/operationMode rsmNode follows, in rsmNode's namespace (\"\" = any publisher); "+
			"the messages of others are dropped and counted as "+ros.CounterForeignSamples,
		"the subscription is created at start-up"), nil)
	if err := d.Err(); err != nil {
		return nil, err
	}
	cfg.Navigation.NavigationTuning = live.Get().tuning()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	store, err := newRemoteStore(n)
	if err != nil {
		return nil, err
	}
	bootCli, err := ros.NewClient(n, Namespace+"bootUpFinished", std_srvs_srv.SetBool)
	if err != nil {
		return nil, err
	}
	if navFactory == nil {
		navFactory = NewActionNavigator
	}
	nav, err := navFactory(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("navigation action client: %w", err)
	}
	infoPub, err := ros.NewPublisher[std_msgs_msg.String](n, Namespace+"stateInfo", ros.QoSDefault)
	if err != nil {
		return nil, err
	}
	fsmPub, err := fsmnode.New(n, rsm.Graph(cfg))
	if err != nil {
		return nil, err
	}
	machine := fsmPub.Machine(rsm.Machine)
	si, err := rsm.NewStateInterface(cfg, rsm.Deps{
		Store: store, Boot: bootClient{bootCli}, Nav: nav, Runner: NewActionStateRunner(ctx, n), Registry: opts.Registry,
		Clock: n.Clock(), Log: log,
		OnStateChange: func(name string) {
			if err := infoPub.Publish(&std_msgs_msg.String{Data: name}); err != nil {
				log.Errorf("publish stateInfo: %v", err)
			}
		},
		OnTransition: func(_, to, cause string) { machine.Observe(to, cause) },
	})
	if err != nil {
		return nil, err
	}
	if err := si.CheckPlugins(); err != nil {
		log.Errorf("rsm: %v; states using it fall back to Idle", err)
	}
	if err := stateInterfaceInputs(ctx, n, si, modeFrom); err != nil {
		return nil, err
	}
	if err := tickAt(n, hz, func() {
		// Live parameters changed since the last cycle apply from this one.
		if l, ok := live.Changed(); ok {
			_ = si.SetNavigationTuning(l.tuning()) // valid: the group checked it with rsm.Config.Validate
		}
		si.Tick(ctx)
	}); err != nil {
		return nil, err
	}
	si.Start()
	return si, nil
}

// stateInterfaceInputs creates rsmNode's subscriptions (rsm/operationMode
// from modeFrom, rsm/simpleGoal, rsm/explorationGoals, rsm/failedGoals,
// rsm/goalObsolete, rsm/reverseMode) and services
// (rsm/startStopExploration, rsm/startStopWaypointFollowing,
// rsm/stop2DNavGoal, rsm/stateInfo), all handed to si.
func stateInterfaceInputs(ctx context.Context, n *ros.Node, si *rsm.StateInterface, modeFrom string) error {
	warn := func(err error) {
		if err != nil {
			n.Logger().Warnf("%v", err)
		}
	}
	subs := []func() error{
		func() error {
			_, err := ros.NewSubscription(n, Namespace+"operationMode", ros.QoSDefault, func(m *rsm_msgs_msg.OperationMode) {
				warn(si.OnOperationMode(ctx, OperationModeFromMsg(m)))
			}, operationModeFilter(n, modeFrom)...)
			return err
		},
		func() error {
			_, err := ros.NewSubscription(n, Namespace+"simpleGoal", ros.QoSDefault, func(m *geometry_msgs_msg.PoseStamped) {
				warn(si.OnSimpleGoal(ctx, PoseFromMsg(&m.Pose)))
			})
			return err
		},
		func() error {
			_, err := ros.NewSubscription(n, Namespace+"explorationGoals", ros.QoSDefault, func(m *geometry_msgs_msg.PoseArray) {
				warn(si.OnExplorationGoals(PosesFromMsg(m.Poses)))
			})
			return err
		},
		func() error {
			_, err := ros.NewSubscription(n, Namespace+"failedGoals", ros.QoSDefault, func(m *geometry_msgs_msg.PoseArray) {
				warn(si.OnFailedGoals(PosesFromMsg(m.Poses)))
			})
			return err
		},
		func() error {
			_, err := ros.NewSubscription(n, Namespace+"goalObsolete", ros.QoSDefault, func(m *std_msgs_msg.Bool) {
				si.OnGoalObsolete(ctx, m.Data)
			})
			return err
		},
		func() error {
			_, err := ros.NewSubscription(n, Namespace+"reverseMode", ros.QoSDefault, func(m *std_msgs_msg.Bool) {
				si.OnReverseMode(ctx, m.Data)
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"startStopExploration", std_srvs_srv.SetBool,
				func(ctx context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
					r := si.StartStopExploration(ctx, req.Data)
					return &std_srvs_srv.SetBool_Response{Success: r.Success, Message: r.Message}, nil
				})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"startStopWaypointFollowing", std_srvs_srv.SetBool,
				func(ctx context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
					r := si.StartStopWaypointFollowing(ctx, req.Data)
					return &std_srvs_srv.SetBool_Response{Success: r.Success, Message: r.Message}, nil
				})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"stop2DNavGoal", std_srvs_srv.Trigger,
				func(ctx context.Context, _ *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
					si.Stop2DNavGoal(ctx)
					// The original left the response fields at their defaults.
					return &std_srvs_srv.Trigger_Response{}, nil
				})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"stateInfo", std_srvs_srv.Trigger,
				func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
					return &std_srvs_srv.Trigger_Response{Success: true, Message: si.StateName()}, nil
				})
			return err
		},
	}
	for _, f := range subs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// pluginHint ends the descriptions of the plugin parameters.
const pluginHint = ": a registered plugin name, or " + rsm.ActionPluginPrefix +
	"<action> for a plugin node serving rsm_msgs/action/RunState there (docs/rsm.md#plugins)"

// stateInterfaceConfig declares rsmNode's parameters: the plugins and
// action names are read-only, the Navigation plugin's stuck detection and
// server wait are live (one group, checked with the whole rsm.Config).
func stateInterfaceConfig(d *param.Declarer) (cfg rsm.Config, live *param.Group[navLive]) {
	cfg = rsm.DefaultConfig()
	strs := []struct {
		dst       *string
		name, def string
		desc, why string
	}{
		{&cfg.CalculateGoalPlugin, "calculate_goal_plugin", rsm.CalculateGoalStateName,
			"plugin state that computes exploration goals" + pluginHint, "plugins are checked at start-up"},
		{&cfg.NavigationPlugin, "navigation_plugin", rsm.NavigationStateName,
			"plugin state that drives to goals" + pluginHint, "plugins are checked at start-up"},
		{&cfg.MappingPlugin, "mapping_plugin", rsm.MappingDummyStateName,
			"plugin state run at reached exploration goals" + pluginHint, "plugins are checked at start-up"},
		{&cfg.Navigation.Action, "navigation_action", "navigate_to_pose", "Nav2 NavigateToPose action for forward driving",
			"the action client is created at start-up"},
		{&cfg.Navigation.ReverseAction, "reverse_navigation_action", "navigate_to_pose_reverse", "NavigateToPose action for reverse driving",
			"the action client is created at start-up"},
	}
	for _, s := range strs {
		*s.dst = param.Declare(d, s.name, s.def, param.ReadOnly(s.desc, s.why), nil)
	}
	// The check parses the entries into cfg.RoutinePlugins.
	param.Declare(d, "routine_plugins", []string{}, param.ReadOnly(
		"plugins of waypoint routines, entries <routine>=<plugin> (e.g. Stairs=action:/my_robot/stairs); "+
			"a routine not listed runs rsm::<routine>RoutineState", "plugins are checked at start-up"),
		func(r []string) error {
			var err error
			cfg.RoutinePlugins, err = ParseRoutinePlugins(r)
			return err
		})
	def := cfg.Navigation.NavigationTuning
	base := cfg
	dur := func(name string, field func(l *navLive) *time.Duration, desc string) param.GroupField[navLive] {
		return param.DurationField(name, field, param.Descriptor{Description: desc, FloatRange: param.Floats(0, 86400)})
	}
	live = param.DeclareGroup(d, navLive{PoseTolerance: def.PoseTolerance, Idle: def.IdleTimer, Unstuck: def.UnstuckTimer,
		ServerTimeout: def.ServerTimeout}, func(l navLive) error { return l.validate(base) },
		param.Field("pose_tolerance", func(l *navLive) *float64 { return &l.PoseTolerance }, param.Descriptor{
			Description: "m (and rad) of movement below which the robot counts as standing still (live)",
			FloatRange:  param.Floats(0, 100)}),
		dur("idle_timer_duration", func(l *navLive) *time.Duration { return &l.Idle },
			"seconds standing still while AUTONOMOUS until stuck; at least unstuck_timer_duration + 1 (live)"),
		dur("unstuck_timer_duration", func(l *navLive) *time.Duration { return &l.Unstuck },
			"seconds driving with the opposite action to get unstuck (live)"),
		param.Field("idle_timer_behavior", func(l *navLive) *bool { return &l.AbortWhenStuck }, param.Descriptor{
			Description: "still stuck after the unstuck attempt: true aborts to Idle, false fails the goal (live)"}),
		dur("action_server_timeout", func(l *navLive) *time.Duration { return &l.ServerTimeout },
			"seconds the navigation state waits for a missing NavigateToPose action server (forward or reverse) "+
				"(or a plugin's missing RunState server) before it gives up and goes to Idle; 0 waits for ever (live)"))
	return cfg, live
}

// navLive is rsmNode's live navigation tuning as its parameters hold it:
// action_server_timeout 0 waits for ever.
type navLive struct {
	PoseTolerance                float64
	Idle, Unstuck, ServerTimeout time.Duration
	AbortWhenStuck               bool
}

// tuning is l as the state machine takes it (waiting for ever is negative).
func (l navLive) tuning() rsm.NavigationTuning {
	t := rsm.NavigationTuning{PoseTolerance: l.PoseTolerance, IdleTimer: l.Idle, UnstuckTimer: l.Unstuck,
		AbortWhenStuck: l.AbortWhenStuck, ServerTimeout: l.ServerTimeout}
	if t.ServerTimeout == 0 {
		t.ServerTimeout = -1 // wait for ever
	}
	return t
}

// validate checks l as part of the whole configuration base; the
// parameters refuse timers of 0, which the machine would take as its
// defaults.
func (l navLive) validate(base rsm.Config) error {
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"idle_timer_duration", l.Idle}, {"unstuck_timer_duration", l.Unstuck}} {
		if err := positiveDuration(t.d); err != nil {
			return fmt.Errorf("%s = %v: %w", t.name, t.d.Seconds(), err)
		}
	}
	base.Navigation.NavigationTuning = l.tuning()
	return base.Validate()
}

// operationModeFilter returns the option that makes rsmNode follow only
// the rsm/operationMode of node name in its own namespace (a second
// publisher, a fake one, made it flap between Idle and Emergency Stop), or
// none for name "".
func operationModeFilter(n *ros.Node, name string) []ros.EndpointOption {
	if name == "" {
		return nil
	}
	ns := n.Namespace()
	return []ros.EndpointOption{ros.WithPublisherFilter(func(p ros.PublisherIdentity) bool {
		return p.Known && p.Node.Name == name && p.Node.Namespace == ns
	})}
}
