package bag

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	fsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/fsm_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

func TestSnapshotWindowAndTrigger(t *testing.T) {
	dir := t.TempDir()
	var logs []string
	s, err := NewSnapshotter(SnapshotOptions{Dir: dir, Window: 2 * time.Second, Holdoff: time.Second,
		Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write("/x", t0, t0, []byte{0, 1, 0, 0}); err == nil {
		t.Error("undeclared topic accepted")
	}
	if err := s.AddTopic(Topic{Name: "/x", Type: "std_msgs/msg/String", Schema: "string data\n"}); err != nil {
		t.Fatal(err)
	}
	// 10 s at 10 Hz; the ring keeps 2 s of it.
	for i := 0; i <= 100; i++ {
		recv := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		if err := s.Write("/x", recv, recv, []byte(fmt.Sprintf("\x00\x01\x00\x00%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if st.Messages != 21 || st.Evicted != 80 {
		t.Errorf("ring: %+v", st)
	}
	at := t0.Add(10 * time.Second)
	ev := Event{Time: at, Kind: "estop", Topic: "/rsm/operationMode", From: "AUTONOMOUS", To: "AUTONOMOUS+EMERGENCY_STOP", Cause: "test"}
	bagDir := s.Trigger(ev)
	if bagDir == "" {
		t.Fatal("no snapshot")
	}
	if again := s.Trigger(Event{Time: at.Add(500 * time.Millisecond), Kind: "estop"}); again != "" {
		t.Errorf("an event within the holdoff wrote %s", again)
	}
	s.Wait()
	b, err := Open(bagDir)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := EventOf(b.Metadata)
	if !ok || got != ev {
		t.Errorf("trigger in metadata: %+v, want %+v", got, ev)
	}
	if b.Metadata.MessageCount != 21 || !b.Metadata.Start.Equal(t0.Add(8*time.Second)) || !b.Metadata.End().Equal(at) {
		t.Errorf("window: %d messages from %v to %v", b.Metadata.MessageCount, b.Metadata.Start, b.Metadata.End())
	}
	if s.Stats().Skipped != 1 || !strings.Contains(strings.Join(logs, "\n"), "wrote 21 messages") {
		t.Errorf("stats %+v, logs %q", s.Stats(), logs)
	}
}

// TriggerThen calls back once the bag opens (metadata.yaml written), with
// its directory; an event within the holdoff writes nothing and calls
// nothing back, unless it is a manual request; a bag that cannot be
// written is reported.
func TestSnapshotTriggerThen(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSnapshotter(SnapshotOptions{Dir: dir, Window: time.Minute, Holdoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.AddTopic(Topic{Name: "/x", Type: "std_msgs/msg/String", Schema: "string data\n"})
	for i := range 10 {
		recv := t0.Add(time.Duration(i) * time.Second)
		if err := s.Write("/x", recv, recv, []byte("\x00\x01\x00\x00abc")); err != nil {
			t.Fatal(err)
		}
	}
	type outcome struct {
		dir      string
		err      error
		messages uint64
	}
	got := make(chan outcome, 3)
	done := func(d string, err error) {
		o := outcome{dir: d, err: err}
		if b, oerr := Open(d); oerr == nil { // what a caller does at once
			o.messages = b.Metadata.MessageCount
		} else if err == nil {
			o.err = oerr
		}
		got <- o
	}
	at := t0.Add(10 * time.Second)
	bagDir := s.TriggerThen(Event{Time: at, Kind: "estop"}, done)
	if again := s.TriggerThen(Event{Time: at.Add(100 * time.Millisecond), Kind: "fault_counter"}, done); again != "" {
		t.Errorf("within the holdoff: %q", again)
	}
	if o := <-got; o.dir != bagDir || o.err != nil || o.messages != 10 {
		t.Errorf("done(%q, %v) with %d messages; want %q, nil, 10", o.dir, o.err, o.messages, bagDir)
	}
	// A manual request is written within the holdoff too: a user asked.
	manual := s.TriggerThen(Event{Time: at.Add(200 * time.Millisecond), Kind: KindManual}, done)
	if manual == "" || manual == bagDir {
		t.Errorf("a manual request within the holdoff: %q", manual)
	}
	if o := <-got; o.dir != manual || o.err != nil || o.messages != 10 {
		t.Errorf("manual: done(%q, %v) with %d messages; want %q, nil, 10", o.dir, o.err, o.messages, manual)
	}
	// a snapshot that cannot be written: its parent is now a file (root
	// too gets ENOTDIR)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	failed := s.TriggerThen(Event{Time: at.Add(time.Minute), Kind: KindManual}, done)
	if o := <-got; o.dir != failed || o.err == nil {
		t.Errorf("unwritable: done(%q, %v), want %q and an error", o.dir, o.err, failed)
	}
	s.Wait()
	if len(got) != 0 {
		t.Errorf("done called for the event within the holdoff: %+v", <-got)
	}
}

func TestSnapshotMemoryAndDiskBounds(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSnapshotter(SnapshotOptions{Dir: dir, Window: time.Hour, MaxBytes: 10 * (1000 + ringMsgOverhead), KeepBags: 3})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.AddTopic(Topic{Name: "/big", Type: "std_msgs/msg/String"})
	payload := make([]byte, 1000)
	for i := 0; i < 50; i++ {
		_ = s.Write("/big", t0.Add(time.Duration(i)*time.Millisecond), t0, payload)
	}
	if st := s.Stats(); st.Messages != 10 || st.Bytes > 10*(1000+ringMsgOverhead) {
		t.Errorf("memory bound: %+v", st)
	}
	for i := 0; i < 5; i++ {
		if s.Trigger(Event{Time: t0.Add(time.Duration(i) * time.Minute), Kind: "fault_counter"}) == "" {
			t.Fatal("snapshot refused")
		}
		s.Wait()
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("%d snapshot bags kept, want 3", len(entries))
	}
	if _, err := os.Stat(filepath.Join(dir, entries[2].Name(), MetadataFile)); err != nil || !strings.HasSuffix(entries[2].Name(), "_fault_counter") {
		t.Errorf("newest kept: %v %v", entries[2].Name(), err)
	}
}

func cdrOf(m rosidl.Message) []byte { return rosidl.Marshal(m, nil) }

func TestDetector(t *testing.T) {
	mode := func(estop bool, m uint8) []byte {
		return cdrOf(&rsm_msgs_msg.OperationMode{EmergencyStop: estop, Mode: m})
	}
	body := func(s string) []byte { return cdrOf(&std_msgs_msg.String{Data: s}) }
	diag := func(level byte, msg string) []byte {
		return cdrOf(&diagnostic_msgs_msg.DiagnosticArray{Status: []diagnostic_msgs_msg.DiagnosticStatus{
			{Name: "/diffbot/robotControlMuxNode: counters", Level: level, Message: msg},
			{Name: "/other: something", Level: diagnostic_msgs_msg.DiagnosticStatus_WARN},
		}})
	}
	const om, vb, dg = "/diffbot/rsm/operationMode", "/velma/velma_bridge/ve_body/state", "/diagnostics"
	const omT, strT, dgT = "rsm_msgs/msg/OperationMode", "std_msgs/msg/String", "diagnostic_msgs/msg/DiagnosticArray"
	steps := []struct {
		topic, typ string
		data       []byte
		want       string // "" or kind:from->to
	}{
		{om, omT, mode(false, 2), ""}, // first message: state only
		{om, omT, mode(false, 2), ""},
		{om, omT, mode(true, 2), "estop:TELEOPERATION->TELEOPERATION+EMERGENCY_STOP"},
		{om, omT, mode(true, 0), ""},
		{om, omT, mode(false, 0), ""}, // released
		{om, omT, mode(false, 1), ""},
		{om, omT, mode(false, 0), "autonomy_stop:AUTONOMOUS->STOPPED"},
		{om, omT, mode(false, 2), ""},
		{om, omT, mode(false, 0), ""}, // teleoperation idle: not an event
		{om, omT, mode(true, 0), "estop:STOPPED->STOPPED+EMERGENCY_STOP"},
		{om, omT, []byte{0, 1}, ""}, // malformed
		{vb, strT, body("idle"), ""},
		{vb, strT, body("safe"), ""},
		{vb, strT, body("transp"), ""},
		{vb, strT, body("transp_st"), ""},
		{vb, strT, body("safe"), "ve_body_safe:transp_st->safe"},
		{"/chatter", strT, body("safe"), ""},                                   // not a ve_body topic
		{dg, dgT, diag(diagnostic_msgs_msg.DiagnosticStatus_WARN, "x +1"), ""}, // first report
		{dg, dgT, diag(diagnostic_msgs_msg.DiagnosticStatus_OK, "no new faults"), ""},
		{dg, dgT, diag(diagnostic_msgs_msg.DiagnosticStatus_WARN, "commands_rejected +2"), "fault_counter:OK->WARN"},
		{dg, dgT, diag(diagnostic_msgs_msg.DiagnosticStatus_WARN, "commands_rejected +1"), ""}, // still rising
	}
	d := NewDetector()
	for i, s := range steps {
		evs := d.Check(s.topic, s.typ, t0, s.data)
		got := ""
		if len(evs) > 1 {
			t.Errorf("step %d: %d events", i, len(evs))
		}
		if len(evs) == 1 {
			got = evs[0].Kind + ":" + evs[0].From + "->" + evs[0].To
		}
		if got != s.want {
			t.Errorf("step %d (%s): %q, want %q", i, s.topic, got, s.want)
		}
	}
	if d.Malformed != 1 {
		t.Errorf("malformed: %d", d.Malformed)
	}
}

func TestDetectorTransitions(t *testing.T) {
	tr := func(machine, from, to, cause string) []byte {
		return cdrOf(&fsm_msgs_msg.Transition{Machine: machine, FromState: from, ToState: to, Cause: cause, InGraph: true})
	}
	mode := func(estop bool, m uint8) []byte {
		return cdrOf(&rsm_msgs_msg.OperationMode{EmergencyStop: estop, Mode: m})
	}
	const mux, vb, om = "/diffbot/robotControlMuxNode/fsm/transition", "/velma/velma_core/fsm/transition", "/diffbot/rsm/operationMode"
	const trT, omT = "fsm_msgs/msg/Transition", "rsm_msgs/msg/OperationMode"
	steps := []struct {
		at         time.Duration
		topic, typ string
		data       []byte
		want       string
	}{
		{0, om, omT, mode(false, 2), ""},
		// The transient-local history of the mux's transitions: no events.
		{0, mux, trT, tr("operation_mode", "", "STOPPED", "start"), ""},
		{10 * time.Millisecond, mux, trT, tr("operation_mode", "STOPPED", "E-STOP/STOPPED", "setOperationMode (e-stop on)"), ""},
		{20 * time.Millisecond, mux, trT, tr("operation_mode", "E-STOP/STOPPED", "STOPPED", "setOperationMode (e-stop off)"), ""},
		// From now on the transitions give the events, operationMode none.
		{time.Second, om, omT, mode(true, 2), ""},
		{time.Second, mux, trT, tr("operation_mode", "TELEOPERATION", "E-STOP/TELEOPERATION", "setOperationMode (e-stop on)"), "estop:operation_mode:TELEOPERATION->E-STOP/TELEOPERATION"},
		{2 * time.Second, mux, trT, tr("operation_mode", "E-STOP/TELEOPERATION", "E-STOP/STOPPED", "teleoperation_idle_timer"), ""},
		{3 * time.Second, mux, trT, tr("operation_mode", "E-STOP/STOPPED", "STOPPED", "setOperationMode (e-stop off)"), ""},
		{4 * time.Second, mux, trT, tr("operation_mode", "STOPPED", "AUTONOMOUS", "setOperationMode"), ""},
		{5 * time.Second, mux, trT, tr("operation_mode", "AUTONOMOUS", "STOPPED", "autonomy_cmd_vel_timeout"), "watchdog_stop:operation_mode:AUTONOMOUS->STOPPED"},
		{5 * time.Second, mux, trT, tr("operation_mode", "AUTONOMOUS", "STOPPED", "setOperationMode"), ""},
		{5 * time.Second, mux, trT, []byte{0, 1, 0}, ""}, // malformed
		{5 * time.Second, vb, trT, tr("ve_body", "", "idle", "start"), ""},
		{6 * time.Second, vb, trT, tr("ve_body", "safe", "transp", "exit safe"), ""},
		{6 * time.Second, vb, trT, tr("ve_body", "transp", "transp_st", "σ"), ""},
		{7 * time.Second, vb, trT, tr("ve_body", "transp_st", "safe", "cs silent"), "ve_body_safe:ve_body:transp_st->safe"},
		{7 * time.Second, vb, trT, tr("cs", "transp", "safe", "x"), ""},
	}
	d := NewDetector()
	for i, s := range steps {
		evs := d.Check(s.topic, s.typ, t0.Add(s.at), s.data)
		got := ""
		if len(evs) == 1 {
			got = evs[0].Kind + ":" + evs[0].Machine + ":" + evs[0].From + "->" + evs[0].To
		}
		if len(evs) > 1 || got != s.want {
			t.Errorf("step %d: %d events %q, want %q", i, len(evs), got, s.want)
		}
	}
	if d.Malformed != 1 {
		t.Errorf("malformed: %d", d.Malformed)
	}
}

func TestFlightDir(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv("ROS_HOME", "/tmp/rh")
	for in, want := range map[string]string{
		"":         "/tmp/rh/fsmnodes/flight_recorder",
		"/x/y":     "/x/y",
		"~/.ros/f": filepath.Join(home, ".ros/f"),
		"rel":      "rel",
	} {
		if got, err := flightDir(in); err != nil || got != want {
			t.Errorf("flightDir(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
