package rsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// Reply texts of the service provider (the original's strings).
const (
	msgOutOfRange = "Position out of waypoint array range"
)

// PoseSource gives the robot pose in the map frame (the node uses its TF
// buffer: map → robot_frame).
type PoseSource interface {
	RobotPose() (Pose, error)
}

// ReverseSwitcher is /rsm/setNavigationToReverse (std_srvs/SetBool), the
// robot-specific service that switches navigation to reverse driving.
type ReverseSwitcher interface {
	SetNavigationToReverse(ctx context.Context, reverse bool) (Reply, error)
}

// StoreConfig configures the data store (private parameters of
// serviceProviderNode).
type StoreConfig struct {
	// (optional) waypoint_routines: names returned by getWaypointRoutines.
	Routines []string
	// (optional) waypoints_file: where waypoints are kept across restarts;
	// "" keeps them in memory only.
	WaypointsFile string
	// (optional) Pose gives the robot pose; without it getRobotPose fails.
	Pose PoseSource
	// (optional) Reverser is called by setReverseMode; without it
	// setReverseMode answers "Unable to set reverse mode".
	Reverser ReverseSwitcher
	// (optional) Log; default discards.
	Log Logger
	// (optional) Bounds of the stored waypoints; zero fields take the
	// defaults of DefaultBounds.
	Bounds Bounds
}

// Bounds limit what the store keeps, saves and publishes, so that a
// client cannot make it grow without end (issue 25: 70 MB of routines
// were accepted, saved and reloaded on every restart).
type Bounds struct {
	// MaxWaypoints (max_waypoints) is the most waypoints the store holds;
	// addWaypoint beyond it is refused.
	MaxWaypoints int
	// MaxRoutineLength (max_routine_length) is the longest routine name,
	// in bytes, addWaypoint and setWaypointRoutine accept.
	MaxRoutineLength int
}

// DefaultBounds are the bounds of a store whose config leaves them zero.
func DefaultBounds() Bounds { return Bounds{MaxWaypoints: 1000, MaxRoutineLength: 256} }

// withDefaults fills zero fields from DefaultBounds.
func (b Bounds) withDefaults() Bounds {
	d := DefaultBounds()
	if b.MaxWaypoints <= 0 {
		b.MaxWaypoints = d.MaxWaypoints
	}
	if b.MaxRoutineLength <= 0 {
		b.MaxRoutineLength = d.MaxRoutineLength
	}
	return b
}

// maxFileSize is the largest waypoints file the bounds allow: a file
// larger than this is not read. A waypoint takes about 200 bytes of YAML
// plus its routine, which YAML may escape (at most 4 bytes for 1); the
// factor 2 is a margin.
func (b Bounds) maxFileSize() int64 {
	return 4096 + 2*int64(b.MaxWaypoints)*(512+4*int64(b.MaxRoutineLength))
}

// check refuses an array beyond the bounds.
func (b Bounds) check(arr WaypointArray) error {
	if len(arr.Waypoints) > b.MaxWaypoints {
		return fmt.Errorf("%d waypoints, more than max_waypoints %d", len(arr.Waypoints), b.MaxWaypoints)
	}
	for i, w := range arr.Waypoints {
		if len(w.Routine) > b.MaxRoutineLength {
			return fmt.Errorf("waypoint %d: routine of %d bytes, longer than max_routine_length %d", i, len(w.Routine), b.MaxRoutineLength)
		}
	}
	return nil
}

var _ DataStore = (*Store)(nil)

// Store is the RSM's data store (ServiceProvider of the original):
// waypoints, navigation goal, exploration goal status, exploration mode and
// reverse mode. Each method answers one /rsm service with the original's
// reply texts. It implements DataStore.
//
// Waypoints (with mode and reverse flag) are written to WaypointsFile after
// every change (atomically: SaveWaypoints; a request that changes nothing
// writes nothing) and loaded by NewStore; a corrupt file, or one beyond the
// Bounds, is reported and moved aside, never dropped. A change whose save
// fails is kept in memory and answered success=false with the reason.
type Store struct {
	cfg StoreConfig
	log Logger

	bounds    Bounds
	waypoints WaypointArray
	version   uint64 // counts the changes of waypoints
	lastSaved []byte // the file's content as last written or loaded
	goal      NavigationGoal
	expStatus GoalStatus
	expMode   bool // true = Interrupt, false = Finish
	reverse   bool
}

// NewStore returns a store, loading the waypoints file if one is configured.
// A missing file is fine; a corrupt one is moved aside (the error log says
// where) and the store starts empty.
func NewStore(cfg StoreConfig) *Store {
	s := &Store{
		cfg:       cfg,
		log:       cfg.Log,
		bounds:    cfg.Bounds.withDefaults(),
		goal:      NavigationGoal{Mode: NavigationNone, WaypointPosition: -1, Goal: Pose{Orientation: geom.Identity}},
		expStatus: GoalStatus{Goal: Pose{Orientation: geom.Identity}, Status: GoalActive},
	}
	if s.log == nil {
		s.log = nopLogger{}
	}
	if cfg.WaypointsFile == "" {
		return s
	}
	if _, err := os.Stat(cfg.WaypointsFile); errors.Is(err, fs.ErrNotExist) {
		s.log.Infof("rsm: waypoints file %s does not exist yet; it is created on the first change", cfg.WaypointsFile)
		return s
	}
	arr, err := loadWaypoints(cfg.WaypointsFile, s.bounds)
	if err != nil {
		// A *CorruptFileError says where the file was moved.
		s.log.Errorf("rsm: %v; starting without waypoints", err)
		return s
	}
	s.waypoints = arr
	s.lastSaved, _ = encodeWaypoints(arr)
	s.log.Infof("rsm: loaded %d waypoints from %s", len(arr.Waypoints), cfg.WaypointsFile)
	return s
}

// saved persists the waypoints after a change and returns r, or, when the
// file cannot be written, a failure that gives r's message and the reason:
// the change stays in memory (it is published and used, and the next
// successful save writes it too), but the caller learns that it would not
// survive a restart.
func (s *Store) saved(r Reply) Reply {
	data, err := encodeWaypoints(s.waypoints)
	if err == nil && bytes.Equal(data, s.lastSaved) {
		return r // nothing changed: nothing to publish or write
	}
	s.version++
	if s.cfg.WaypointsFile == "" {
		s.lastSaved = data
		return r
	}
	if err == nil {
		err = writeWaypoints(s.cfg.WaypointsFile, data)
	}
	if err != nil {
		s.log.Errorf("rsm: waypoints not saved: %v", err)
		return fail(fmt.Sprintf("%s in memory, but not saved: %v", r.Message, err))
	}
	s.lastSaved = data
	return r
}

// Version counts the changes of the waypoint array (waypoints, mode and
// direction): a publisher republishes the array when it changes.
func (s *Store) Version() uint64 { return s.version }

// Bounds returns the bounds in force.
func (s *Store) Bounds() Bounds { return s.bounds }

func (s *Store) inRange(pos int64) bool { return pos >= 0 && pos < int64(len(s.waypoints.Waypoints)) }

// Waypoints returns a copy of the waypoint array (published on
// /rsm/waypoints).
func (s *Store) Waypoints() WaypointArray {
	c := s.waypoints
	c.Waypoints = append([]Waypoint(nil), s.waypoints.Waypoints...)
	return c
}

// AddWaypoint inserts wp at position (0 ≤ position < size) or appends it.
// A pose with NaN/Inf is refused.
func (s *Store) AddWaypoint(wp Waypoint, position int64) Reply {
	if err := wp.Pose.Validate(); err != nil {
		return fail("Waypoint rejected: " + err.Error())
	}
	if n := len(s.waypoints.Waypoints); n >= s.bounds.MaxWaypoints {
		return fail(fmt.Sprintf("Waypoint rejected: the store holds %d waypoints, the most max_waypoints allows", n))
	}
	if err := s.checkRoutine(wp.Routine); err != nil {
		return fail("Waypoint rejected: " + err.Error())
	}
	if s.inRange(position) {
		w := s.waypoints.Waypoints
		w = append(w[:position], append([]Waypoint{wp}, w[position:]...)...)
		s.waypoints.Waypoints = w
		return s.saved(ok("Added waypoint successfully"))
	}
	s.waypoints.Waypoints = append(s.waypoints.Waypoints, wp)
	return s.saved(ok("Added waypoint successfully at the end"))
}

// GetWaypoints returns the waypoint array.
func (s *Store) GetWaypoints(context.Context) (WaypointArray, error) { return s.Waypoints(), nil }

// MoveWaypoint replaces the pose of the waypoint at position.
func (s *Store) MoveWaypoint(position int64, pose Pose) Reply {
	if err := pose.Validate(); err != nil {
		return fail("Waypoint rejected: " + err.Error())
	}
	if !s.inRange(position) {
		return fail(msgOutOfRange)
	}
	s.waypoints.Waypoints[position].Pose = pose
	return s.saved(ok("Moved waypoint successfully"))
}

// RemoveWaypoint removes the waypoint at position.
func (s *Store) RemoveWaypoint(position int64) Reply {
	if !s.inRange(position) {
		return fail(msgOutOfRange)
	}
	w := s.waypoints.Waypoints
	s.waypoints.Waypoints = append(w[:position], w[position+1:]...)
	return s.saved(ok("Removed waypoint successfully"))
}

// WaypointVisited marks the waypoint at position visited.
func (s *Store) WaypointVisited(_ context.Context, position int64) (Reply, error) {
	if !s.inRange(position) {
		return fail(msgOutOfRange), nil
	}
	s.waypoints.Waypoints[position].Visited = true
	return s.saved(ok("Waypoint visited")), nil
}

// WaypointUnreachable marks the waypoint at position unreachable.
func (s *Store) WaypointUnreachable(position int64) Reply {
	if !s.inRange(position) {
		return fail(msgOutOfRange)
	}
	s.waypoints.Waypoints[position].Unreachable = true
	return s.saved(ok("Waypoint unreachable"))
}

// ResetWaypoints clears visited and unreachable of every waypoint.
func (s *Store) ResetWaypoints(context.Context) (Reply, error) {
	for i := range s.waypoints.Waypoints {
		s.waypoints.Waypoints[i].Visited = false
		s.waypoints.Waypoints[i].Unreachable = false
	}
	return s.saved(ok("Waypoints reset")), nil
}

// SetWaypointFollowingMode sets mode and direction; an unknown mode is
// refused.
func (s *Store) SetWaypointFollowingMode(_ context.Context, mode WaypointMode, reverse bool) (Reply, error) {
	if !mode.Valid() {
		return fail(fmt.Sprintf("Unknown waypoint following mode %d (0 SINGLE, 1 ROUNDTRIP, 2 PATROL)", mode)), nil
	}
	s.waypoints.Mode, s.waypoints.Reverse = mode, reverse
	return s.saved(ok("Waypoint Following mode changed")), nil
}

// SetWaypointRoutine sets the routine of the waypoint at position.
func (s *Store) SetWaypointRoutine(position int64, routine string) Reply {
	if !s.inRange(position) {
		return fail(msgOutOfRange)
	}
	if err := s.checkRoutine(routine); err != nil {
		return fail("Routine rejected: " + err.Error())
	}
	s.waypoints.Waypoints[position].Routine = routine
	return s.saved(ok("Waypoint routine set"))
}

// checkRoutine refuses a routine name longer than MaxRoutineLength.
func (s *Store) checkRoutine(routine string) error {
	if len(routine) > s.bounds.MaxRoutineLength {
		return fmt.Errorf("routine of %d bytes, longer than max_routine_length %d", len(routine), s.bounds.MaxRoutineLength)
	}
	return nil
}

// GetWaypointRoutines returns the configured routine names.
func (s *Store) GetWaypointRoutines() []string { return append([]string(nil), s.cfg.Routines...) }

// SetNavigationGoal stores the goal; an exploration goal also becomes the
// ACTIVE exploration goal status. A NaN/Inf pose or unknown mode is refused.
func (s *Store) SetNavigationGoal(_ context.Context, g NavigationGoal) (Reply, error) {
	if err := g.Goal.Validate(); err != nil {
		return fail("Navigation goal rejected: " + err.Error()), nil
	}
	if g.Mode < NavigationNone || g.Mode > NavigationSimpleGoal {
		return fail(fmt.Sprintf("Unknown navigation mode %d (0 exploration, 1 waypoint following, 2 simple goal)", g.Mode)), nil
	}
	s.goal = g
	if g.Mode == NavigationExploration {
		s.expStatus = GoalStatus{Goal: g.Goal, Status: GoalActive}
	}
	return ok("Navigation goal set"), nil
}

// GetNavigationGoal returns the stored goal (mode -1 and position -1 until
// one is set).
func (s *Store) GetNavigationGoal(context.Context) (NavigationGoal, error) { return s.goal, nil }

// NavigationGoalCompleted applies how the current goal ended: exploration →
// exploration goal status (only overwritten if the report comes from
// navigation, the status is still ACTIVE, or ABORTED replaces REACHED);
// waypoint → visited (REACHED) or unreachable (FAILED). Always success.
func (s *Store) NavigationGoalCompleted(_ context.Context, st GoalStatus, navigationStatus bool) (Reply, error) {
	switch s.goal.Mode {
	case NavigationExploration:
		cur := s.expStatus.Status
		if navigationStatus || cur == GoalActive || (st.Status == GoalAborted && cur == GoalReached) {
			s.expStatus = GoalStatus{Goal: s.goal.Goal, Status: st.Status}
		}
		return ok("Exploration goal completed"), nil
	case NavigationWaypointFollowing:
		if p := s.goal.WaypointPosition; s.inRange(p) {
			switch st.Status {
			case GoalReached:
				s.waypoints.Waypoints[p].Visited = true
				return s.saved(ok("Waypoint completed")), nil
			case GoalFailed:
				s.waypoints.Waypoints[p].Unreachable = true
				return s.saved(ok("Waypoint completed")), nil
			}
		}
		return ok("Waypoint completed"), nil
	}
	return ok("Navigation goal completed"), nil
}

// ExplorationGoalStatus returns the current exploration goal and its status
// (published on /rsm/explorationGoalStatus).
func (s *Store) ExplorationGoalStatus() GoalStatus { return s.expStatus }

// GetRobotPose returns the robot pose in the map frame.
func (s *Store) GetRobotPose(context.Context) (Pose, error) {
	if s.cfg.Pose == nil {
		return Pose{}, errors.New("robot pose: no pose source configured")
	}
	p, err := s.cfg.Pose.RobotPose()
	if err != nil {
		return Pose{}, fmt.Errorf("robot pose: %w", err)
	}
	return p, nil
}

// SetExplorationMode sets the exploration mode (true Interrupt, false
// Finish).
func (s *Store) SetExplorationMode(interrupt bool) Reply {
	s.expMode = interrupt
	return ok("Exploration mode set")
}

// GetExplorationMode returns the exploration mode (true Interrupt).
func (s *Store) GetExplorationMode(context.Context) (bool, error) { return s.expMode, nil }

// ExplorationModeReply answers /rsm/getExplorationMode: success = mode,
// "Exploration mode returned".
func (s *Store) ExplorationModeReply() Reply {
	return Reply{Success: s.expMode, Message: "Exploration mode returned"}
}

// SetReverseMode switches reverse driving: if it differs from the current
// mode the flag is stored (even if the switch fails, as in the original)
// and /rsm/setNavigationToReverse is called.
func (s *Store) SetReverseMode(ctx context.Context, reverse bool) (Reply, error) {
	if reverse == s.reverse {
		return fail("Already in requested mode"), nil
	}
	s.reverse = reverse
	if s.cfg.Reverser == nil {
		s.log.Errorf("rsm: set reverse mode: no /rsm/setNavigationToReverse client configured")
		return fail("Unable to set reverse mode"), nil
	}
	r, err := s.cfg.Reverser.SetNavigationToReverse(ctx, reverse)
	if err != nil {
		s.log.Errorf("rsm: set reverse mode: call /rsm/setNavigationToReverse: %v", err)
		return fail("Unable to set reverse mode"), nil
	}
	if !r.Success {
		return fail("Mode not set"), nil
	}
	return ok("Mode set"), nil
}

// GetReverseMode returns true while reverse driving is active.
func (s *Store) GetReverseMode(context.Context) (bool, error) { return s.reverse, nil }

// ReverseModeReply answers /rsm/getReverseMode.
func (s *Store) ReverseModeReply() Reply {
	if s.reverse {
		return ok("Reverse mode active")
	}
	return fail("Forward mode active")
}
