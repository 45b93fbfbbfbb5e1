package rsmnode

import (
	"context"
	"errors"
	"os"
	"reflect"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/internal/rsm/tf"
	"github.com/fsmnodes/fsmnodes/internal/viz"
	"github.com/fsmnodes/fsmnodes/internal/viz/viznode"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
	visualization_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/visualization_msgs/msg"
)

// ServiceProviderNodeName is the data store's node name.
const ServiceProviderNodeName = "serviceProviderNode"

// QoS of /tf and /tf_static as tf2_ros's listener uses them. The static
// reader keeps 100 samples like tf2_ros: every tf_static writer (the
// simulator's map → odom, robot_state_publisher's fixed joints) latches its
// own sample, and with a depth of 1 the historical samples of several
// writers would replace each other before the callback takes them.
var (
	tfQoS       = ros.QoSDefault.KeepLast(100)
	tfStaticQoS = ros.QoSLatched.KeepLast(100)
)

// whyBounds is the reason the waypoint bounds are read-only.
const whyBounds = "the waypoints file is checked against them at start-up"

// waypointsRepublish is how often an unchanged waypoint array is
// published again.
const waypointsRepublish = time.Second

// SetupServiceProvider is the setup of serviceProviderNode (newServiceProvider).
func SetupServiceProvider(_ context.Context, n *ros.Node) error {
	_, err := newServiceProvider(n)
	return err
}

// newServiceProvider declares serviceProviderNode's parameters and wires
// an rsm.Store to n: every service of
// docs/rsm.md#service-provider-of-the-original under rsm/, the topics
// rsm/waypoints, rsm/explorationMode, rsm/explorationGoalStatus and
// rsm/reverseMode (published every cycle), rsm/waypoint_markers
// (visualization_msgs/MarkerArray for RViz, transient local, on change), /tf and /tf_static into a TF
// buffer for getRobotPose, and the rsm/setNavigationToReverse client.
func newServiceProvider(n *ros.Node) (*rsm.Store, error) {
	d := ros.NewDeclarer(n)
	hz := declareRate(d)
	p, err := declareServiceProviderParams(n, d)
	if err != nil {
		return nil, err
	}
	revCli, err := ros.NewClient(n, Namespace+"setNavigationToReverse", std_srvs_srv.SetBool)
	if err != nil {
		return nil, err
	}
	buf := tf.NewBuffer()
	// A transform from /tf expires on the node clock: under use_sim_time a
	// paused simulation does not age the odometry it stopped sending.
	buf.Now = n.Clock().Now
	store := rsm.NewStore(rsm.StoreConfig{
		Routines: p.routines, WaypointsFile: p.file, Log: n.Logger(),
		Bounds:   p.bounds,
		Pose:     tf.PoseSource{Buffer: buf, Map: MapFrame, Robot: p.robotFrame},
		Reverser: reverseClient{revCli},
	})
	if err := subscribeTF(n, buf); err != nil {
		return nil, err
	}
	if err := serviceProviderServices(n, store); err != nil {
		return nil, err
	}
	if err := publishStore(n, store, hz); err != nil {
		return nil, err
	}
	return store, nil
}

// serviceProviderParams are serviceProviderNode's read-only parameters.
type serviceProviderParams struct {
	robotFrame string
	routines   []string
	file       string // expanded; "" keeps the waypoints in memory only
	bounds     rsm.Bounds
}

// declareServiceProviderParams declares serviceProviderNode's read-only
// parameters (the rate is declared by the caller) and expands the
// waypoints file's path.
func declareServiceProviderParams(n *ros.Node, d *param.Declarer) (serviceProviderParams, error) {
	var p serviceProviderParams
	p.robotFrame = param.Declare(d, "robot_frame", "/base_link",
		param.ReadOnly("TF frame of the robot; the pose is map -> robot_frame", "the pose source is built at start-up"),
		func(f string) error {
			if tf.Frame(f) == "" {
				return errors.New("empty frame id")
			}
			return nil
		})
	p.routines = param.Declare(d, "waypoint_routines", []string{},
		param.ReadOnly("routine names (rsm::<Name>RoutineState) offered for waypoints",
			"stored waypoints refer to them; they are checked at start-up"), nil)
	file := param.Declare(d, "waypoints_file", "",
		param.ReadOnly("YAML file that keeps the waypoints across restarts (\"\" = memory only; a leading $ROS_HOME or ~ is expanded)",
			"the waypoints are loaded from it at start-up"), nil)
	def := rsm.DefaultBounds()
	maxWaypoints := param.Declare(d, "max_waypoints", int64(def.MaxWaypoints), param.Descriptor{
		Description: "the most waypoints kept: addWaypoint beyond it is refused, and a waypoints file holding more is moved aside at start-up (read-only: " + whyBounds + ")",
		ReadOnly:    true, ReadOnlyReason: whyBounds, IntegerRange: param.Ints(1, 100000)}, nil)
	maxRoutine := param.Declare(d, "max_routine_length", int64(def.MaxRoutineLength), param.Descriptor{
		Description: "the longest routine name in bytes: addWaypoint and setWaypointRoutine refuse a longer one (read-only: " + whyBounds + ")",
		ReadOnly:    true, ReadOnlyReason: whyBounds, IntegerRange: param.Ints(1, 65536)}, nil)
	if err := d.Err(); err != nil {
		return p, err
	}
	p.bounds = rsm.Bounds{MaxWaypoints: int(maxWaypoints), MaxRoutineLength: int(maxRoutine)}
	var err error
	if p.file, err = ExpandPath(file, os.Getenv); err != nil {
		return p, err
	}
	if p.file != "" {
		n.Logger().Infof("rsm: waypoints are kept in %s", p.file)
	}
	return p, nil
}

// subscribeTF feeds /tf and /tf_static into buf; a bad transform is
// dropped and logged once per burst.
func subscribeTF(n *ros.Node, buf *tf.Buffer) error {
	log := n.Logger()
	var tfBad burst
	onTF := func(static bool) func(*tf2_msgs_msg.TFMessage) {
		return func(m *tf2_msgs_msg.TFMessage) {
			for i := range m.Transforms {
				if err := buf.Set(TransformFromMsg(&m.Transforms[i], static)); err != nil {
					tfBad.fail(log, "rsm: transform dropped: %v (further bad transforms are dropped silently)", err)
					continue
				}
				tfBad.ok(log, "rsm: transforms are good again")
			}
		}
	}
	if _, err := ros.NewSubscription(n, "/tf", tfQoS, onTF(false)); err != nil {
		return err
	}
	_, err := ros.NewSubscription(n, "/tf_static", tfStaticQoS, onTF(true))
	return err
}

// publishStore publishes the store's state at hz: rsm/waypoint_markers
// (latched) when they change, rsm/waypoints when they change and every
// waypointsRepublish, and the modes and the exploration goal status every
// cycle.
func publishStore(n *ros.Node, store *rsm.Store, hz *param.Live[float64]) error {
	log := n.Logger()
	wpPub, err := ros.NewPublisher[rsm_msgs_msg.WaypointArray](n, Namespace+"waypoints", ros.QoSDefault)
	if err != nil {
		return err
	}
	expPub, err := ros.NewPublisher[std_msgs_msg.Bool](n, Namespace+"explorationMode", ros.QoSDefault.KeepLast(1))
	if err != nil {
		return err
	}
	statusPub, err := ros.NewPublisher[rsm_msgs_msg.GoalStatus](n, Namespace+"explorationGoalStatus", ros.QoSDefault.KeepLast(1))
	if err != nil {
		return err
	}
	revPub, err := ros.NewPublisher[std_msgs_msg.Bool](n, Namespace+"reverseMode", ros.QoSDefault)
	if err != nil {
		return err
	}
	// Markers are published when they change and kept for late joiners
	// (RViz started after the waypoints were set).
	markerPub, err := ros.NewPublisher[visualization_msgs_msg.MarkerArray](n, Namespace+"waypoint_markers", ros.QoSLatched)
	if err != nil {
		return err
	}
	var lastMarkers []viz.Marker
	var pubErr burst
	// The waypoint array is published when it changes and otherwise once
	// every waypointsRepublish (for subscribers that joined since), not at
	// every cycle: it may be max_waypoints long.
	var wpVersion uint64
	var wpAt time.Time
	return tickAt(n, hz, func() {
		if ms := rsm.WaypointMarkers(MapFrame, store.Waypoints()); lastMarkers == nil || !reflect.DeepEqual(ms, lastMarkers) {
			if err := markerPub.Publish(viznode.MarkerArray(ms)); err != nil {
				pubErr.fail(log, "rsm: publish: %v", err)
				return
			}
			lastMarkers = ms
		}
		var wpErr error
		if now := time.Now(); wpAt.IsZero() || store.Version() != wpVersion || now.Sub(wpAt) >= waypointsRepublish || now.Before(wpAt) {
			wp := WaypointArrayToMsg(store.Waypoints(), n.Clock().Now())
			if wpErr = wpPub.Publish(&wp); wpErr == nil {
				wpVersion, wpAt = store.Version(), now
			}
		}
		exp, _ := store.GetExplorationMode(context.Background())
		rev, _ := store.GetReverseMode(context.Background())
		st := GoalStatusToMsg(store.ExplorationGoalStatus())
		for _, err := range []error{
			wpErr,
			expPub.Publish(&std_msgs_msg.Bool{Data: exp}),
			statusPub.Publish(&st),
			revPub.Publish(&std_msgs_msg.Bool{Data: rev}),
		} {
			if err != nil {
				pubErr.fail(log, "rsm: publish: %v", err)
				return
			}
		}
		pubErr.ok(log, "rsm: publishing again")
	})
}

// serviceProviderServices creates the services of
// docs/rsm.md#service-provider-of-the-original.
func serviceProviderServices(n *ros.Node, s *rsm.Store) error {
	ref := newRefusals(n)
	for _, group := range [][]func() error{waypointServices(n, s, ref), navigationServices(n, s, ref), modeServices(n, s)} {
		for _, create := range group {
			if err := create(); err != nil {
				return err
			}
		}
	}
	return nil
}

// waypointServices returns the steps that create the waypoint services:
// the list, its edits and the routines.
func waypointServices(n *ros.Node, s *rsm.Store, ref *refusals) []func() error {
	return []func() error{
		func() error {
			_, err := ros.NewService(n, Namespace+"addWaypoint", rsm_msgs_srv.AddWaypoint, func(_ context.Context, r *rsm_msgs_srv.AddWaypoint_Request) (*rsm_msgs_srv.AddWaypoint_Response, error) {
				rep := ref.check("addWaypoint", s.AddWaypoint(WaypointFromMsg(&r.Waypoint), r.Position))
				return &rsm_msgs_srv.AddWaypoint_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"getWaypoints", rsm_msgs_srv.GetWaypoints, func(ctx context.Context, _ *rsm_msgs_srv.GetWaypoints_Request) (*rsm_msgs_srv.GetWaypoints_Response, error) {
				a, _ := s.GetWaypoints(ctx)
				return &rsm_msgs_srv.GetWaypoints_Response{WaypointArray: WaypointArrayToMsg(a, n.Clock().Now())}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"moveWaypoint", rsm_msgs_srv.MoveWaypoint, func(_ context.Context, r *rsm_msgs_srv.MoveWaypoint_Request) (*rsm_msgs_srv.MoveWaypoint_Response, error) {
				rep := ref.check("moveWaypoint", s.MoveWaypoint(r.Position, PoseFromMsg(&r.Pose)))
				return &rsm_msgs_srv.MoveWaypoint_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"removeWaypoint", rsm_msgs_srv.RemoveWaypoint, func(_ context.Context, r *rsm_msgs_srv.RemoveWaypoint_Request) (*rsm_msgs_srv.RemoveWaypoint_Response, error) {
				rep := ref.check("removeWaypoint", s.RemoveWaypoint(r.Position))
				return &rsm_msgs_srv.RemoveWaypoint_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"waypointVisited", rsm_msgs_srv.WaypointVisited, func(ctx context.Context, r *rsm_msgs_srv.WaypointVisited_Request) (*rsm_msgs_srv.WaypointVisited_Response, error) {
				rep, _ := s.WaypointVisited(ctx, r.Position)
				rep = ref.check("waypointVisited", rep)
				return &rsm_msgs_srv.WaypointVisited_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"waypointUnreachable", rsm_msgs_srv.WaypointUnreachable, func(_ context.Context, r *rsm_msgs_srv.WaypointUnreachable_Request) (*rsm_msgs_srv.WaypointUnreachable_Response, error) {
				rep := ref.check("waypointUnreachable", s.WaypointUnreachable(r.Position))
				return &rsm_msgs_srv.WaypointUnreachable_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"resetWaypoints", std_srvs_srv.Trigger, func(ctx context.Context, _ *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
				rep, _ := s.ResetWaypoints(ctx)
				rep = ref.check("resetWaypoints", rep)
				return &std_srvs_srv.Trigger_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"setWaypointFollowingMode", rsm_msgs_srv.SetWaypointFollowingMode, func(ctx context.Context, r *rsm_msgs_srv.SetWaypointFollowingMode_Request) (*rsm_msgs_srv.SetWaypointFollowingMode_Response, error) {
				rep, _ := s.SetWaypointFollowingMode(ctx, rsm.WaypointMode(r.Mode), r.Reverse)
				rep = ref.check("setWaypointFollowingMode", rep)
				return &rsm_msgs_srv.SetWaypointFollowingMode_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"setWaypointRoutine", rsm_msgs_srv.SetWaypointRoutine, func(_ context.Context, r *rsm_msgs_srv.SetWaypointRoutine_Request) (*rsm_msgs_srv.SetWaypointRoutine_Response, error) {
				rep := ref.check("setWaypointRoutine", s.SetWaypointRoutine(r.Position, r.Routine))
				return &rsm_msgs_srv.SetWaypointRoutine_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"getWaypointRoutines", rsm_msgs_srv.GetWaypointRoutines, func(context.Context, *rsm_msgs_srv.GetWaypointRoutines_Request) (*rsm_msgs_srv.GetWaypointRoutines_Response, error) {
				return &rsm_msgs_srv.GetWaypointRoutines_Response{WaypointRoutines: s.GetWaypointRoutines()}, nil
			})
			return err
		},
	}
}

// navigationServices returns the steps that create the navigation goal services and getRobotPose.
func navigationServices(n *ros.Node, s *rsm.Store, ref *refusals) []func() error {
	log := n.Logger()
	return []func() error{
		func() error {
			_, err := ros.NewService(n, Namespace+"setNavigationGoal", rsm_msgs_srv.SetNavigationGoal, func(ctx context.Context, r *rsm_msgs_srv.SetNavigationGoal_Request) (*rsm_msgs_srv.SetNavigationGoal_Response, error) {
				rep, _ := s.SetNavigationGoal(ctx, rsm.NavigationGoal{Goal: PoseFromMsg(&r.Goal),
					Mode: rsm.NavigationMode(r.NavigationMode), WaypointPosition: r.WaypointPosition, Routine: r.Routine})
				rep = ref.check("setNavigationGoal", rep)
				return &rsm_msgs_srv.SetNavigationGoal_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"getNavigationGoal", rsm_msgs_srv.GetNavigationGoal, func(ctx context.Context, _ *rsm_msgs_srv.GetNavigationGoal_Request) (*rsm_msgs_srv.GetNavigationGoal_Response, error) {
				g, _ := s.GetNavigationGoal(ctx)
				return &rsm_msgs_srv.GetNavigationGoal_Response{Goal: PoseToMsg(g.Goal), NavigationMode: int8(g.Mode),
					WaypointPosition: g.WaypointPosition, Routine: g.Routine}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"navigationGoalCompleted", rsm_msgs_srv.GoalCompleted, func(ctx context.Context, r *rsm_msgs_srv.GoalCompleted_Request) (*rsm_msgs_srv.GoalCompleted_Response, error) {
				rep, _ := s.NavigationGoalCompleted(ctx, GoalStatusFromMsg(&r.Status), r.NavigationStatus)
				rep = ref.check("navigationGoalCompleted", rep)
				return &rsm_msgs_srv.GoalCompleted_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			var poseErr burst
			_, err := ros.NewService(n, Namespace+"getRobotPose", rsm_msgs_srv.GetRobotPose, func(ctx context.Context, _ *rsm_msgs_srv.GetRobotPose_Request) (*rsm_msgs_srv.GetRobotPose_Response, error) {
				p, err := s.GetRobotPose(ctx)
				if err != nil {
					// The response has no success flag: an all-zero pose
					// (invalid quaternion) says "no pose"; log once per outage.
					poseErr.fail(log, "rsm: getRobotPose: %v; is TF map -> robot_frame published (SLAM, localization)?", err)
					return &rsm_msgs_srv.GetRobotPose_Response{Pose: geometry_msgs_msg.Pose{}}, nil
				}
				poseErr.ok(log, "rsm: getRobotPose: robot pose available")
				return &rsm_msgs_srv.GetRobotPose_Response{Pose: PoseToMsg(p)}, nil
			})
			return err
		},
	}
}

// modeServices returns the steps that create the exploration and reverse mode services.
func modeServices(n *ros.Node, s *rsm.Store) []func() error {
	return []func() error{
		func() error {
			_, err := ros.NewService(n, Namespace+"setExplorationMode", std_srvs_srv.SetBool, func(_ context.Context, r *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
				rep := s.SetExplorationMode(r.Data)
				return &std_srvs_srv.SetBool_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"getExplorationMode", std_srvs_srv.Trigger, func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
				rep := s.ExplorationModeReply()
				return &std_srvs_srv.Trigger_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"setReverseMode", std_srvs_srv.SetBool, func(ctx context.Context, r *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
				rep, _ := s.SetReverseMode(ctx, r.Data)
				return &std_srvs_srv.SetBool_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
		func() error {
			_, err := ros.NewService(n, Namespace+"getReverseMode", std_srvs_srv.Trigger, func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
				rep := s.ReverseModeReply()
				return &std_srvs_srv.Trigger_Response{Success: rep.Success, Message: rep.Message}, nil
			})
			return err
		},
	}
}
