package velmanode

import (
	"errors"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/velma"
)

// TestAbortCause: a goal cs aborts names why, for every cause the
// snapshot shows (issue 25: goals ended early with no logged reason; the
// result said only "the behaviour ended or a newer goal replaced this
// one").
func TestAbortCause(t *testing.T) {
	running := func(id uint32) velma.TrajStatus { return velma.TrajStatus{ID: id, State: velma.TrajAborted} }
	transp := velma.Report{BodyState: velma.BodyTransp}
	for _, c := range []struct {
		name string
		snap Snapshot
		kind TrajKind
		want string
	}{
		{"cs silent", Snapshot{Stale: true, StaleWhy: "no new record for 120 ms", Report: transp}, TrajJnt, "no status from velma_core_cs (no new record for 120 ms)"},
		{"replaced", Snapshot{Report: transp, CS: velma.CSStatus{State: velma.CSJntImp, Jnt: running(8)}}, TrajJnt, "replaced by motion 8"},
		{"ve_body safe", Snapshot{Report: velma.Report{BodyState: velma.BodySafe}, CS: velma.CSStatus{State: velma.CSIdle, Jnt: running(7)}}, TrajJnt, "ve_body (the safety layer) is safe"},
		{"ve_body fault", Snapshot{Report: velma.Report{BodyState: velma.BodyIdle, SC: velma.StatusSC{FaultType: velma.FaultCommHW, FaultyModuleID: 2}},
			CS: velma.CSStatus{State: velma.CSIdle, Jnt: running(7)}}, TrajJnt, "fault type"},
		{"behaviour error", Snapshot{Report: transp, CS: velma.CSStatus{State: velma.CSIdle, BehaviourErr: errors.New("command source lost"),
			Cart: [2]velma.TrajStatus{running(7)}}}, TrajCartRight, "cs behaviour error: command source lost"},
		{"head, cs left its state", Snapshot{Report: transp, CS: velma.CSStatus{State: velma.CSSafe, Head: running(7)}}, TrajHead, "cs is " + velma.CSSafe.String()},
		{"left wrist", Snapshot{Report: transp, CS: velma.CSStatus{State: velma.CSCartImp, Cart: [2]velma.TrajStatus{running(3), running(9)}}}, TrajCartLeft, "replaced by motion 9"},
	} {
		if got := AbortCause(c.snap, c.kind, 7); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want it to contain %q", c.name, got, c.want)
		}
	}
}
