package velma

import (
	"math"
	"testing"
)

func transpStatus() BodyStatus {
	bs := BodyStatus{Valid: true, EffectorStatus: okStatus()}
	bs.RArm.Q = [ArmDOF]float64{-0.3, -1.8, 1.25, 0.85, 0, -0.5, 0}
	bs.LArm.Q = [ArmDOF]float64{0.3, 1.8, -1.25, -0.85, 0, 0.5, 0}
	return bs
}

// A behaviour error (here a NaN velocity that makes the torque non-finite)
// is reported, zero torque is sent, and on the next iteration
// ¬CURRENT_BEHAVIOR_OK ends the state with IN_ERROR → idle, from where cs
// asks ve_body to exit its safe state again.
func TestCS_BehaviourError_NextIterationIdleViaInError(t *testing.T) {
	cs, err := NewCS(DefaultCSConfig())
	if err != nil {
		t.Fatal(err)
	}
	bs := transpStatus()
	cs.Run(bs, nil)
	if cs.State() != CSSafe {
		t.Fatalf("state %v, want safe", cs.State())
	}
	bad := bs
	bad.RArm.DQ[2] = math.NaN()
	out := cs.Run(bad, nil)
	if cs.Status().BehaviourErr == nil || cs.State() != CSSafe {
		t.Fatalf("no behaviour error reported (state %v)", cs.State())
	}
	for _, v := range out.RArm.T {
		if v != 0 {
			t.Fatalf("torque %v sent after a behaviour error, want zeros", out.RArm.T)
		}
	}
	out = cs.Run(bs, nil)
	if st := cs.Status().Step; cs.State() != CSIdle || !st.InError {
		t.Fatalf("state %v step %+v, want idle via IN_ERROR", cs.State(), st)
	}
	if out.SC != ExitSafeState {
		t.Fatalf("idle sends sc=%d, want %d", out.SC, ExitSafeState)
	}
	if cs.Run(bs, nil); cs.State() != CSSafe {
		t.Fatalf("state %v, want safe again", cs.State())
	}
}

// safe holds the pose captured on entry with a weak spring.
func TestCS_Safe_HoldsEntryPose(t *testing.T) {
	cs, _ := NewCS(DefaultCSConfig())
	bs := transpStatus()
	cs.Run(bs, nil)
	moved := bs
	moved.RArm.Q[0] += 0.2
	out := cs.Run(moved, nil)
	// k = 5 Nm/rad pulls back by about 1 Nm (repulsion stage is not part of safe)
	if math.Abs(out.RArm.T[0]+1.0) > 1e-9 {
		t.Fatalf("torque %v, want -1.0 (5 Nm/rad × 0.2 rad)", out.RArm.T[0])
	}
}
