package rsmnode

import (
	"context"
	"errors"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// remoteStore is rsm.DataStore over the service provider's services. A
// missing service provider is reported once (per outage) with what to
// start; the states see rsm.ErrUnavailable.
type remoteStore struct {
	log    rsm.Logger
	outage burst

	getWaypoints       *ros.Client[rsm_msgs_srv.GetWaypoints_Request, rsm_msgs_srv.GetWaypoints_Response]
	setWaypointMode    *ros.Client[rsm_msgs_srv.SetWaypointFollowingMode_Request, rsm_msgs_srv.SetWaypointFollowingMode_Response]
	resetWaypoints     *ros.Client[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response]
	waypointVisited    *ros.Client[rsm_msgs_srv.WaypointVisited_Request, rsm_msgs_srv.WaypointVisited_Response]
	setNavigationGoal  *ros.Client[rsm_msgs_srv.SetNavigationGoal_Request, rsm_msgs_srv.SetNavigationGoal_Response]
	getNavigationGoal  *ros.Client[rsm_msgs_srv.GetNavigationGoal_Request, rsm_msgs_srv.GetNavigationGoal_Response]
	goalCompleted      *ros.Client[rsm_msgs_srv.GoalCompleted_Request, rsm_msgs_srv.GoalCompleted_Response]
	getRobotPose       *ros.Client[rsm_msgs_srv.GetRobotPose_Request, rsm_msgs_srv.GetRobotPose_Response]
	getExplorationMode *ros.Client[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response]
	getReverseMode     *ros.Client[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response]
	setReverseMode     *ros.Client[std_srvs_srv.SetBool_Request, std_srvs_srv.SetBool_Response]
}

var _ rsm.DataStore = (*remoteStore)(nil)

func newRemoteStore(n *ros.Node) (*remoteStore, error) {
	s := &remoteStore{log: n.Logger()}
	var err error
	create := func(f func() error) {
		if err == nil {
			err = f()
		}
	}
	create(func() (e error) {
		s.getWaypoints, e = ros.NewClient(n, Namespace+"getWaypoints", rsm_msgs_srv.GetWaypoints)
		return
	})
	create(func() (e error) {
		s.setWaypointMode, e = ros.NewClient(n, Namespace+"setWaypointFollowingMode", rsm_msgs_srv.SetWaypointFollowingMode)
		return
	})
	create(func() (e error) {
		s.resetWaypoints, e = ros.NewClient(n, Namespace+"resetWaypoints", std_srvs_srv.Trigger)
		return
	})
	create(func() (e error) {
		s.waypointVisited, e = ros.NewClient(n, Namespace+"waypointVisited", rsm_msgs_srv.WaypointVisited)
		return
	})
	create(func() (e error) {
		s.setNavigationGoal, e = ros.NewClient(n, Namespace+"setNavigationGoal", rsm_msgs_srv.SetNavigationGoal)
		return
	})
	create(func() (e error) {
		s.getNavigationGoal, e = ros.NewClient(n, Namespace+"getNavigationGoal", rsm_msgs_srv.GetNavigationGoal)
		return
	})
	create(func() (e error) {
		s.goalCompleted, e = ros.NewClient(n, Namespace+"navigationGoalCompleted", rsm_msgs_srv.GoalCompleted)
		return
	})
	create(func() (e error) {
		s.getRobotPose, e = ros.NewClient(n, Namespace+"getRobotPose", rsm_msgs_srv.GetRobotPose)
		return
	})
	create(func() (e error) {
		s.getExplorationMode, e = ros.NewClient(n, Namespace+"getExplorationMode", std_srvs_srv.Trigger)
		return
	})
	create(func() (e error) {
		s.getReverseMode, e = ros.NewClient(n, Namespace+"getReverseMode", std_srvs_srv.Trigger)
		return
	})
	create(func() (e error) {
		s.setReverseMode, e = ros.NewClient(n, Namespace+"setReverseMode", std_srvs_srv.SetBool)
		return
	})
	return s, err
}

// check reports a missing service provider once per outage.
func (s *remoteStore) check(err error) error {
	if errors.Is(err, rsm.ErrUnavailable) {
		s.outage.fail(s.log, "rsm: the service provider is not running (%v); start serviceProviderNode: "+
			"`fsmnodes launch fsmnodes rsm.launch.xml` starts it with the other RSM nodes, "+
			"or run the service_provider executable", err)
	} else if err == nil {
		s.outage.ok(s.log, "rsm: the service provider is available again")
	}
	return err
}

// GetWaypoints calls /rsm/getWaypoints.
func (s *remoteStore) GetWaypoints(ctx context.Context) (rsm.WaypointArray, error) {
	r, err := call(ctx, s.getWaypoints, &rsm_msgs_srv.GetWaypoints_Request{})
	if s.check(err) != nil {
		return rsm.WaypointArray{}, err
	}
	return WaypointArrayFromMsg(&r.WaypointArray), nil
}

// SetWaypointFollowingMode calls /rsm/setWaypointFollowingMode.
func (s *remoteStore) SetWaypointFollowingMode(ctx context.Context, mode rsm.WaypointMode, reverse bool) (rsm.Reply, error) {
	r, err := call(ctx, s.setWaypointMode, &rsm_msgs_srv.SetWaypointFollowingMode_Request{Mode: uint8(mode), Reverse: reverse})
	if s.check(err) != nil {
		return rsm.Reply{}, err
	}
	return rsm.Reply{Success: r.Success, Message: r.Message}, nil
}

// ResetWaypoints calls /rsm/resetWaypoints.
func (s *remoteStore) ResetWaypoints(ctx context.Context) (rsm.Reply, error) {
	r, err := call(ctx, s.resetWaypoints, &std_srvs_srv.Trigger_Request{})
	if s.check(err) != nil {
		return rsm.Reply{}, err
	}
	return rsm.Reply{Success: r.Success, Message: r.Message}, nil
}

// WaypointVisited calls /rsm/waypointVisited.
func (s *remoteStore) WaypointVisited(ctx context.Context, position int64) (rsm.Reply, error) {
	r, err := call(ctx, s.waypointVisited, &rsm_msgs_srv.WaypointVisited_Request{Position: position})
	if s.check(err) != nil {
		return rsm.Reply{}, err
	}
	return rsm.Reply{Success: r.Success, Message: r.Message}, nil
}

// SetNavigationGoal calls /rsm/setNavigationGoal.
func (s *remoteStore) SetNavigationGoal(ctx context.Context, g rsm.NavigationGoal) (rsm.Reply, error) {
	r, err := call(ctx, s.setNavigationGoal, &rsm_msgs_srv.SetNavigationGoal_Request{
		Goal: PoseToMsg(g.Goal), NavigationMode: int8(g.Mode), WaypointPosition: g.WaypointPosition, Routine: g.Routine,
	})
	if s.check(err) != nil {
		return rsm.Reply{}, err
	}
	return rsm.Reply{Success: r.Success, Message: r.Message}, nil
}

// GetNavigationGoal calls /rsm/getNavigationGoal.
func (s *remoteStore) GetNavigationGoal(ctx context.Context) (rsm.NavigationGoal, error) {
	r, err := call(ctx, s.getNavigationGoal, &rsm_msgs_srv.GetNavigationGoal_Request{})
	if s.check(err) != nil {
		return rsm.NavigationGoal{}, err
	}
	return rsm.NavigationGoal{Goal: PoseFromMsg(&r.Goal), Mode: rsm.NavigationMode(r.NavigationMode),
		WaypointPosition: r.WaypointPosition, Routine: r.Routine}, nil
}

// NavigationGoalCompleted calls /rsm/navigationGoalCompleted.
func (s *remoteStore) NavigationGoalCompleted(ctx context.Context, st rsm.GoalStatus, navigationStatus bool) (rsm.Reply, error) {
	r, err := call(ctx, s.goalCompleted, &rsm_msgs_srv.GoalCompleted_Request{
		Status: rsm_msgs_msg.GoalStatus{Goal: PoseToMsg(st.Goal), GoalStatus: uint8(st.Status)}, NavigationStatus: navigationStatus,
	})
	if s.check(err) != nil {
		return rsm.Reply{}, err
	}
	return rsm.Reply{Success: r.Success, Message: r.Message}, nil
}

// errNoPose is returned when the service provider has no robot pose (it
// answers an identity-free zero pose then).
var errNoPose = errors.New("service provider has no robot pose (no TF map → robot_frame)")

// GetRobotPose calls /rsm/getRobotPose.
func (s *remoteStore) GetRobotPose(ctx context.Context) (rsm.Pose, error) {
	r, err := call(ctx, s.getRobotPose, &rsm_msgs_srv.GetRobotPose_Request{})
	if s.check(err) != nil {
		return rsm.Pose{}, err
	}
	p := PoseFromMsg(&r.Pose)
	if p.Orientation == (geom.Quat{}) {
		return rsm.Pose{}, errNoPose
	}
	return p, nil
}

// GetExplorationMode calls /rsm/getExplorationMode.
func (s *remoteStore) GetExplorationMode(ctx context.Context) (bool, error) {
	r, err := call(ctx, s.getExplorationMode, &std_srvs_srv.Trigger_Request{})
	if s.check(err) != nil {
		return false, err
	}
	return r.Success, nil
}

// GetReverseMode calls /rsm/getReverseMode.
func (s *remoteStore) GetReverseMode(ctx context.Context) (bool, error) {
	r, err := call(ctx, s.getReverseMode, &std_srvs_srv.Trigger_Request{})
	if s.check(err) != nil {
		return false, err
	}
	return r.Success, nil
}

// SetReverseMode calls /rsm/setReverseMode.
func (s *remoteStore) SetReverseMode(ctx context.Context, reverse bool) (rsm.Reply, error) {
	r, err := call(ctx, s.setReverseMode, &std_srvs_srv.SetBool_Request{Data: reverse})
	if s.check(err) != nil {
		return rsm.Reply{}, err
	}
	return rsm.Reply{Success: r.Success, Message: r.Message}, nil
}

// bootClient is rsm.BootService over /rsm/bootUpFinished.
type bootClient struct {
	c *ros.Client[std_srvs_srv.SetBool_Request, std_srvs_srv.SetBool_Response]
}

// BootUpFinished calls /rsm/bootUpFinished with data=true.
func (b bootClient) BootUpFinished(ctx context.Context) (rsm.Reply, error) {
	r, err := call(ctx, b.c, &std_srvs_srv.SetBool_Request{Data: true})
	if err != nil {
		return rsm.Reply{}, err
	}
	return rsm.Reply{Success: r.Success, Message: r.Message}, nil
}

// reverseClient is rsm.ReverseSwitcher over /rsm/setNavigationToReverse.
type reverseClient struct {
	c *ros.Client[std_srvs_srv.SetBool_Request, std_srvs_srv.SetBool_Response]
}

// SetNavigationToReverse calls /rsm/setNavigationToReverse.
func (r reverseClient) SetNavigationToReverse(ctx context.Context, reverse bool) (rsm.Reply, error) {
	resp, err := call(ctx, r.c, &std_srvs_srv.SetBool_Request{Data: reverse})
	if err != nil {
		return rsm.Reply{}, err
	}
	return rsm.Reply{Success: resp.Success, Message: resp.Message}, nil
}
