package action

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestNext_TableMatchesRclAction(t *testing.T) {
	all := []Status{StatusUnknown, StatusAccepted, StatusExecuting, StatusCanceling, StatusSucceeded, StatusCanceled, StatusAborted}
	events := []Event{EventExecute, EventCancelGoal, EventSucceed, EventAbort, EventCanceled}
	want := map[[2]int]Status{
		{1, int(EventExecute)}:    StatusExecuting,
		{1, int(EventCancelGoal)}: StatusCanceling,
		{2, int(EventCancelGoal)}: StatusCanceling,
		{2, int(EventSucceed)}:    StatusSucceeded,
		{2, int(EventAbort)}:      StatusAborted,
		{3, int(EventSucceed)}:    StatusSucceeded,
		{3, int(EventAbort)}:      StatusAborted,
		{3, int(EventCanceled)}:   StatusCanceled,
	}
	for _, s := range all {
		for _, ev := range events {
			got, ok := Next(s, ev)
			w, wok := want[[2]int{int(s), int(ev)}]
			if ok != wok || got != w {
				t.Errorf("Next(%v, %v) = %v, %v; want %v, %v", s, ev, got, ok, w, wok)
			}
		}
	}
}

func TestGoalID_RandomV4AndString(t *testing.T) {
	id, err := NewGoalID(bytes.NewReader(bytes.Repeat([]byte{0xff}, 16)))
	if err != nil {
		t.Fatal(err)
	}
	if got := id.String(); got != "ffffffff-ffff-4fff-bfff-ffffffffffff" {
		t.Fatalf("String() = %s", got)
	}
	if _, err := NewGoalID(bytes.NewReader([]byte{1, 2})); err == nil {
		t.Fatal("short reader: no error")
	}
	a, _ := NewGoalID(nil)
	b, _ := NewGoalID(nil)
	if a == b || a.IsZero() {
		t.Fatal("crypto ids collide or are zero")
	}
}

var t0 = time.Unix(1000, 0)

func id(b byte) GoalID { return GoalID{b} }

func TestTracker_Lifecycle_SucceedServesWaitersThenExpires(t *testing.T) {
	tr := NewTracker[string](time.Minute)
	if err := tr.Accept(id(1), t0); err != nil {
		t.Fatal(err)
	}
	if err := tr.Accept(id(1), t0); !errors.Is(err, ErrDuplicateGoal) {
		t.Fatalf("duplicate accept = %v", err)
	}
	var got []string
	tr.Result(id(1), func(s Status, r string) { got = append(got, s.String()+":"+r) })
	if len(got) != 0 {
		t.Fatal("result delivered before the goal finished")
	}
	if s, err := tr.Fire(id(1), EventExecute); err != nil || s != StatusExecuting {
		t.Fatalf("execute = %v, %v", s, err)
	}
	if _, err := tr.Fire(id(1), EventSucceed); err == nil {
		t.Fatal("Fire with a terminal event should point to Finish")
	}
	if s, err := tr.Finish(id(1), EventSucceed, "done", t0.Add(time.Second)); err != nil || s != StatusSucceeded {
		t.Fatalf("finish = %v, %v", s, err)
	}
	tr.Result(id(1), func(s Status, r string) { got = append(got, s.String()+":"+r) })
	if want := []string{"SUCCEEDED:done", "SUCCEEDED:done"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("results = %v, want %v", got, want)
	}
	var te *TransitionError
	if _, err := tr.Finish(id(1), EventAbort, "", t0); !errors.As(err, &te) || te.From != StatusSucceeded {
		t.Fatalf("abort after success = %v", err)
	}
	if gone := tr.Expire(t0.Add(30 * time.Second)); len(gone) != 0 {
		t.Fatalf("expired too early: %v", gone)
	}
	if gone := tr.Expire(t0.Add(61 * time.Second)); len(gone) != 1 || gone[0] != id(1) {
		t.Fatalf("Expire = %v", gone)
	}
	tr.Result(id(1), func(s Status, r string) { got = append(got, s.String()+":"+r) })
	if got[2] != "UNKNOWN:" {
		t.Fatalf("result of an expired goal = %q", got[2])
	}
}

func TestTracker_SelectCancel_Rules(t *testing.T) {
	tr := NewTracker[int](0)
	for i := byte(1); i <= 4; i++ {
		if err := tr.Accept(id(i), t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	mustFire(t, tr, id(2), EventExecute)
	mustFire(t, tr, id(3), EventExecute)
	if _, err := tr.Finish(id(3), EventAbort, 0, t0); err != nil {
		t.Fatal(err)
	}
	mustFire(t, tr, id(4), EventCancelGoal) // already canceling
	ids := func(in []Info) []byte {
		var out []byte
		for _, g := range in {
			out = append(out, g.ID[0])
		}
		return out
	}
	cases := []struct {
		name     string
		id       GoalID
		before   time.Time
		want     []byte
		wantCode CancelCode
	}{
		{"all", GoalID{}, time.Time{}, []byte{1, 2}, CancelErrorNone},
		{"before t0+1s", GoalID{}, t0.Add(time.Second), []byte{1}, CancelErrorNone},
		{"before t0", GoalID{}, t0, nil, CancelErrorNone},
		{"one goal", id(2), time.Time{}, []byte{2}, CancelErrorNone},
		{"unknown", id(9), time.Time{}, nil, CancelErrorUnknownGoalID},
		{"terminated", id(3), time.Time{}, nil, CancelErrorGoalTerminated},
		{"goal and before", id(2), t0.Add(time.Second), []byte{1, 2}, CancelErrorNone},
		{"unknown but before selects", id(9), t0.Add(time.Second), []byte{1}, CancelErrorNone},
	}
	for _, c := range cases {
		got, code := tr.SelectCancel(c.id, c.before)
		if !reflect.DeepEqual(ids(got), c.want) || code != c.wantCode {
			t.Errorf("%s: SelectCancel = %v, %v; want %v, %v", c.name, ids(got), code, c.want, c.wantCode)
		}
	}
}

func TestTracker_CanceledGoalReportsCanceled(t *testing.T) {
	tr := NewTracker[int](0)
	if err := tr.Accept(id(1), t0); err != nil {
		t.Fatal(err)
	}
	mustFire(t, tr, id(1), EventExecute)
	mustFire(t, tr, id(1), EventCancelGoal)
	if _, err := tr.Fire(id(1), EventExecute); err == nil {
		t.Fatal("execute while canceling accepted")
	}
	var st Status
	tr.Result(id(1), func(s Status, _ int) { st = s })
	if _, err := tr.Finish(id(1), EventCanceled, 7, t0); err != nil {
		t.Fatal(err)
	}
	if st != StatusCanceled {
		t.Fatalf("waiter got %v", st)
	}
	if l := tr.List(); len(l) != 1 || l[0].Status != StatusCanceled {
		t.Fatalf("List = %+v", l)
	}
	if _, err := tr.Fire(id(7), EventExecute); !errors.Is(err, ErrUnknownGoal) {
		t.Fatalf("Fire unknown = %v", err)
	}
}

func mustFire(t *testing.T, tr *Tracker[int], g GoalID, ev Event) {
	t.Helper()
	if _, err := tr.Fire(g, ev); err != nil {
		t.Fatal(err)
	}
}
