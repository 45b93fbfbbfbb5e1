package velmanode

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

// diag is one ~/diag message as key → value.
type diag map[string]string

func (d diag) u(k string) uint64 { v, _ := strconv.ParseUint(d[k], 10, 64); return v }
func (d diag) f(k string) float64 {
	v, _ := strconv.ParseFloat(d[k], 64)
	return v
}

func diagOf(m *diagnostic_msgs_msg.DiagnosticArray) diag {
	d := diag{}
	for _, s := range m.Status {
		for _, kv := range s.Values {
			d[kv.Key] = kv.Value
		}
		d["message"] = s.Message
	}
	return d
}

// mpRig is the agent as four real processes with an observer node.
type mpRig struct {
	t       *testing.T // the running (sub)test
	top     *testing.T // the test that owns the processes
	ctx     context.Context
	env     []string
	args    []string
	bins    map[string]string
	procs   map[string]*testenv.Process
	n       *ros.Node
	body    latest[diag] // /velma_core_ve_body/diag
	cs      latest[diag] // /velma_core_cs/diag
	st      latest[*velma_msgs_msg.Status]
	csState latest[string]
}

func (r *mpRig) start(name string) *testenv.Process {
	r.t.Helper()
	p := testenv.Start(r.top, name, r.env, r.bins[name], r.args...) // lives on after a subtest
	r.procs[name] = p
	return p
}

func (r *mpRig) signal(name string, sig syscall.Signal) {
	r.t.Helper()
	if err := syscall.Kill(r.procs[name].Pid(), sig); err != nil {
		r.t.Fatalf("signal %s: %v", name, err)
	}
}

// kill SIGKILLs a process and waits until it is gone.
func (r *mpRig) kill(name string) {
	r.t.Helper()
	r.signal(name, syscall.SIGKILL)
	testenv.WaitFor(r.t, 10*time.Second, name+" to die", func() bool { done, _ := r.procs[name].Exited(); return done })
}

// waitTimeout bounds each wait of the rig, so a failure names what it
// waited for long before the test's own deadline.
const waitTimeout = 60 * time.Second

func (r *mpRig) waitBody(what string, cond func(diag) bool) diag {
	r.t.Helper()
	return r.waitDiag(what+" (ve_body's diag)", &r.body, cond)
}

func (r *mpRig) waitCS(what string, cond func(diag) bool) diag {
	r.t.Helper()
	return r.waitDiag(what+" (cs's diag)", &r.cs, cond)
}

// waitDiag waits up to waitTimeout for a report of l that satisfies cond.
// A timeout names the last report of cs and of ve_body and how many each
// sent, to tell a process gone quiet from one that reports otherwise.
func (r *mpRig) waitDiag(what string, l *latest[diag], cond func(diag) bool) diag {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, waitTimeout)
	defer cancel()
	for {
		if d, _ := l.get(); d != nil && cond(d) {
			return d
		}
		select {
		case <-ctx.Done():
			cs, ncs := r.cs.get()
			body, nbody := r.body.get()
			r.t.Fatalf("timed out waiting for %s; last of %d cs reports %v; last of %d ve_body reports %v", what, ncs, cs, nbody, body)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// csRuns waits until cs's diag shows its run counter advance; if it stands
// still for csStall, it fails the test with cs's goroutine dump.
func (r *mpRig) csRuns() {
	r.t.Helper()
	a := r.waitCS("cs report", func(diag) bool { return true }).u("runs")
	for deadline := time.Now().Add(csStall); ; time.Sleep(10 * time.Millisecond) {
		if d, _ := r.cs.get(); d.u("runs") > a {
			return
		}
		if time.Now().After(deadline) {
			r.signal("velma_core_cs", syscall.SIGQUIT) // the log shows where it stands
			time.Sleep(time.Second)                    // for the dump to be written
			r.t.Fatalf("velma_core_cs stopped iterating at run %d", a)
		}
	}
}

// csStall is how long cs's run counter may stand still before csRuns
// calls cs stopped (its diag comes at diagRate).
const csStall = time.Second

func (r *mpRig) call(name string) {
	r.t.Helper()
	cli, err := ros.NewClient(r.n, name, std_srvs_srv.Trigger)
	if err != nil {
		r.t.Fatal(err)
	}
	defer cli.Close()
	if err := cli.WaitForService(r.ctx); err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	// the interface may still be catching up with cs: retry a refusal
	for {
		resp, err := cli.Call(r.ctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			r.t.Fatalf("%s: %v", name, err)
		}
		if resp.Success {
			return
		}
		select {
		case <-r.ctx.Done():
			r.t.Fatalf("%s: %s", name, resp.Message)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ready waits for ve_body transparent and cs safe (both from their own
// diag), with the motors ready.
func (r *mpRig) ready(what string) {
	r.t.Helper()
	r.waitBody(what+": ve_body transp", func(d diag) bool { return strings.HasPrefix(d["state"], "transp") })
	r.waitCS(what+": cs safe", func(d diag) bool { return d["state"] == "safe" })
}

// moving starts a slow body goal from a helper process (VELMA_TEST_HELPER
// hang mode) and waits until the arm moves in jnt_imp. On a loaded machine
// a missed deadline may send ve_body to safe first (cs then refuses or
// ends the goal): it tries again, three times at most.
func (r *mpRig) moving() {
	r.t.Helper()
	for attempt := 1; ; attempt++ {
		r.ready(fmt.Sprintf("goal attempt %d", attempt))
		c := exec.CommandContext(r.ctx, os.Args[0], "-test.run=^$")
		c.Env = append(r.env, "VELMA_TEST_HELPER=hang", "VELMA_TEST_DQ=0.8", "VELMA_TEST_SECONDS=6")
		c.Stderr = os.Stderr
		out, _ := c.StdoutPipe()
		if err := c.Start(); err != nil {
			r.t.Fatal(err)
		}
		r.t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		if line, _ := bufio.NewReader(out).ReadString('\n'); line != "accepted\n" {
			r.t.Fatalf("goal sender said %q", line)
		}
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			cs, _ := r.cs.get()
			b, _ := r.body.get()
			if cs["state"] == "jnt_imp" && b.f("max_joint_speed") > 0.05 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = c.Process.Kill()
		if attempt == 3 {
			r.t.Fatalf("no jnt_imp motion after %d goals (cs %v, ve_body %v)", attempt, r.cs.history()[len(r.cs.history())-1], r.body.history()[len(r.body.history())-1])
		}
		r.t.Logf("goal attempt %d did not start a motion (a missed deadline on this machine?): trying again", attempt)
	}
}

// watchSafeEntries watches ve_body's diag for d and returns how many
// times it left transp for safe (new safe_entry_iteration values),
// logging each with the counters around it.
func (r *mpRig) watchSafeEntries(d time.Duration) int {
	r.t.Helper()
	d0 := r.waitBody("ve_body report", func(diag) bool { return true })
	h0 := len(r.body.history())
	time.Sleep(d)
	seen := map[uint64]bool{}
	prev := d0
	for _, h := range r.body.history()[h0:] {
		if e := h.u("safe_entry_iteration"); e != d0.u("safe_entry_iteration") && !seen[e] {
			seen[e] = true
			r.t.Logf("ve_body safe at iteration %d (last command %d): cmd_missed %d → %d, status_missed %d → %d, overruns %s → %s, cmd_wait_max %s, cs_connected %s",
				e, h.u("safe_entry_last_cmd"), prev.u("cmd_missed"), h.u("cmd_missed"), prev.u("status_missed"), h.u("status_missed"),
				prev["overruns"], h["overruns"], h["cmd_wait_max"], h["cs_connected"])
		}
		prev = h
	}
	return len(seen)
}

// atRest waits for ve_body to report every body joint slower than
// 0.02 rad/s and returns the iterations it took from iteration from.
func (r *mpRig) atRest(from uint64) uint64 {
	r.t.Helper()
	d := r.waitBody("arm at rest", func(d diag) bool { return d.f("max_joint_speed") < 0.02 && d.u("iteration") > from })
	// the first report below the threshold (reports come every 20 ms)
	for _, h := range r.body.history() {
		if h.u("iteration") > from && h.f("max_joint_speed") < 0.02 {
			return h.u("iteration") - from
		}
	}
	return d.u("iteration") - from
}

// newMPRig starts the four processes on a domain and buffers of their
// own with an observer node (extra adds the caller's subscriptions to it
// before they start), and waits until the robot is ready: ve_body
// transparent, cs safe, the motors enabled and homed.
func newMPRig(t *testing.T, ctx context.Context, extra func(*ros.Node) error) *mpRig {
	domain := testenv.Domain(t)
	dir, err := os.MkdirTemp("/dev/shm", "velma-test-")
	if err != nil {
		dir = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	// a 1 s participant lease: the interface's killed goal sender and the
	// killed processes leave the graph quickly
	uri := "<CycloneDDS><Domain><Discovery><LeaseDuration>1s</LeaseDuration></Discovery></Domain></CycloneDDS>"
	if old := os.Getenv("CYCLONEDDS_URI"); old != "" {
		uri = old + "," + uri
	}
	r := &mpRig{t: t, top: t, ctx: ctx, procs: map[string]*testenv.Process{}, bins: map[string]string{},
		env: append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain), "CYCLONEDDS_URI="+uri),
		// SCHED_FIFO where the test may (root in CI) and 10 ms instead of
		// 2 ms for ve_body's waits: on a shared, loaded machine a 2 ms
		// deadline is missed every few seconds (see docs/velma.md), which
		// would end the test's motions before the faults under test. The
		// faults (a dead or stopped process) last far longer.
		args: []string{"--ros-args", "--params-file", "../../../params/velma.yaml", "-p", "buffers:=" + dir + "/velma",
			"-p", "rt.priority:=20", "-p", "ve_body.command_timeout:=0.01", "-p", "ve_body.status_timeout:=0.01"}}
	for _, name := range []string{"velma_sim", "velma_core_ve_body", "velma_core_cs", "velma_task_cs_ros_interface"} {
		r.bins[name] = testenv.Executable(t, "nodes/"+name)
	}
	rc := newCtx(t, domain)
	if r.n, err = rc.NewNode("velma_mp_observer", ""); err != nil {
		t.Fatal(err)
	}
	for _, e := range []error{
		sub(r.n, "/velma_core_ve_body/diag", ros.QoSDefault, func(m *diagnostic_msgs_msg.DiagnosticArray) { r.body.set(diagOf(m)) }),
		sub(r.n, "/velma_core_cs/diag", ros.QoSDefault, func(m *diagnostic_msgs_msg.DiagnosticArray) { r.cs.set(diagOf(m)) }),
		sub(r.n, "/velma_core/status", ros.QoSDefault, func(m *velma_msgs_msg.Status) { r.st.set(m) }),
		sub(r.n, "/velma_core/cs/state", ros.QoSLatched, func(m *std_msgs_msg.String) { r.csState.set(m.Data) }),
	} {
		if e != nil {
			t.Fatal(e)
		}
	}
	if extra != nil {
		if err := extra(r.n); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = rc.Spin(ctx) }()
	for _, name := range []string{"velma_sim", "velma_core_ve_body", "velma_core_cs", "velma_task_cs_ros_interface"} {
		r.start(name)
	}
	r.ready("start-up")
	waitFor(t, ctx, "/velma_core/cs/state safe (the public interface)", func() bool { v, _ := r.csState.get(); return v == "safe" })
	r.call("/velma_core/motors/enable")
	r.call("/velma_core/motors/hp/home")
	r.call("/velma_core/motors/ht/home")
	waitFor(t, ctx, "motors ready", func() bool { s, _ := r.st.get(); return s != nil && s.MotorsReady })
	return r
}

// restartWatch is how long a restarted ve_body is watched for flapping.
const restartWatch = 10 * time.Second

// The core agent as four processes (velma_sim, velma_core_ve_body,
// velma_core_cs, velma_task_cs_ros_interface), with the faults of
// docs/velma.md#fault-matrix: cs killed mid-motion and restarted, the ROS
// interface killed mid-motion, cs stalled by SIGSTOP, ve_body killed
// mid-motion and restarted, the simulator killed. Every figure is taken
// from the processes' own reports (iteration numbers of ve_body's diag),
// not from wall-clock timing.
func TestFourProcesses_Faults(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()     // a domain of its own
	testenv.Heavy(t) // Velma's 500 Hz loops in processes of their own
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r := newMPRig(t, ctx, nil)
	body := r.procs["velma_core_ve_body"]

	t.Run("kill cs mid-motion, restart it", func(t *testing.T) {
		r.t = t
		r.moving()
		before := r.waitBody("ve_body report", func(diag) bool { return true })
		r.kill("velma_core_cs")
		d := r.waitBody("ve_body safe after the kill", func(d diag) bool { return d.u("safe_entry_iteration") > before.u("safe_entry_iteration") })
		entry, last := d.u("safe_entry_iteration"), d.u("safe_entry_last_cmd")
		rest := r.atRest(entry)
		t.Logf("cs killed: last command at ve_body iteration %d, safe at %d (%d iterations later); arm at rest (< 0.02 rad/s) %d iterations (%.0f ms of loop time) after safe",
			last, entry, entry-last, rest, float64(rest)*2)
		if entry-last > 2 {
			t.Errorf("ve_body went safe %d iterations after cs's last command, want ≤ 2", entry-last)
		}
		if rest > 500 {
			t.Errorf("arm at rest %d iterations after safe, want ≤ 500 (1 s)", rest)
		}
		if d := r.waitBody("ve_body report", func(diag) bool { return true }); !strings.HasPrefix(d["state"], "safe") {
			t.Errorf("ve_body %s with cs dead, want safe", d["state"])
		}
		body.MustRun(t)
		r.start("velma_core_cs")
		r.ready("cs restarted")
		body.MustRun(t) // the same ve_body process throughout
		_, n0 := r.st.get()
		waitFor(t, ctx, "the interface hears cs again", func() bool { s, n := r.st.get(); return n > n0+5 && s.CsState == "safe" })
	})
	if t.Failed() {
		return
	}

	t.Run("kill the ROS interface mid-motion", func(t *testing.T) {
		r.t = t
		r.csRuns()
		r.moving()
		before := r.waitCS("cs report", func(diag) bool { return true })
		bodyBefore := r.waitBody("ve_body report", func(diag) bool { return true })
		r.kill("velma_task_cs_ros_interface")
		d := r.waitCS("cs notices the silent task source", func(d diag) bool { return d.u("source_lost") > before.u("source_lost") })
		r.waitCS("cs back in safe", func(d diag) bool { return d["state"] == "safe" })
		from := r.waitBody("ve_body report", func(diag) bool { return true }).u("iteration")
		rest := r.atRest(from)
		b := r.waitBody("ve_body report", func(diag) bool { return true })
		t.Logf("interface killed: cs ended motion %s (source lost), went idle → safe; arm at rest %d iterations after cs was safe; ve_body %s", d["last_lost_id"], rest, b["state"])
		if b.u("safe_entry_iteration") != bodyBefore.u("safe_entry_iteration") {
			t.Errorf("ve_body left transp (safe entry %d → %d): the lost source must only end cs's behaviour", bodyBefore.u("safe_entry_iteration"), b.u("safe_entry_iteration"))
		}
		_, n0 := r.st.get()
		r.start("velma_task_cs_ros_interface")
		waitFor(t, ctx, "the restarted interface reports", func() bool { s, n := r.st.get(); return n > n0+5 && s.CsState == "safe" })
	})
	if t.Failed() {
		return
	}

	t.Run("SIGSTOP cs for 50 ms", func(t *testing.T) {
		r.t = t
		r.ready("before the stall")
		before := r.waitBody("ve_body report", func(diag) bool { return true })
		r.signal("velma_core_cs", syscall.SIGSTOP)
		time.Sleep(50 * time.Millisecond)
		r.signal("velma_core_cs", syscall.SIGCONT)
		d := r.waitBody("ve_body safe after the stall", func(d diag) bool { return d.u("safe_entry_iteration") > before.u("safe_entry_iteration") })
		r.ready("after the stall")
		after := r.waitBody("ve_body report", func(diag) bool { return true })
		t.Logf("cs stopped: ve_body safe at iteration %d (last command %d), transp again by iteration %d through safe_st_ok after > 500 safe iterations",
			d.u("safe_entry_iteration"), d.u("safe_entry_last_cmd"), after.u("iteration"))
		if n := d.u("safe_entry_iteration") - d.u("safe_entry_last_cmd"); n > 2 {
			t.Errorf("ve_body safe %d iterations after the last command, want ≤ 2", n)
		}
		body.MustRun(t)
	})
	if t.Failed() {
		return
	}

	t.Run("kill ve_body mid-motion, restart it", func(t *testing.T) {
		r.t = t
		r.ready("before")
		orig := r.watchSafeEntries(restartWatch)
		r.moving()
		r.kill("velma_core_ve_body")
		r.waitCS("cs idle without ve_body", func(d diag) bool { return d["state"] == "idle" })
		body = r.start("velma_core_ve_body")
		r.ready("ve_body restarted")
		restarted := r.watchSafeEntries(restartWatch)
		// Each entry is one command cs answered late on this loaded
		// machine (logged above with its counters): a figure, not a
		// result, as any timing.
		t.Logf("FIGURE ve_body left transp for safe %d times in %v before the kill, %d times in %v after its restart", orig, restartWatch, restarted, restartWatch)
		r.moving() // the restarted ve_body goes transparent and the agent takes goals
		body.MustRun(t)
	})
	if t.Failed() {
		return
	}

	t.Run("kill velma_sim", func(t *testing.T) {
		r.t = t
		r.kill("velma_sim")
		d := r.waitBody("ve_body reports no effector status", func(d diag) bool {
			ft, _ := strconv.Atoi(d["fault_type"])
			return int32(ft)&velma.FaultCommHW != 0 && d["state"] == "idle"
		})
		t.Logf("simulator killed: ve_body %s, fault_type %s (COMM_HW), last status at iteration %s, message %q", d["state"], d["fault_type"], d["last_status_iteration"], d["message"])
		r.waitCS("cs idle without ve_body's status", func(d diag) bool { return d["state"] == "idle" })
		body.WaitOutput(t, 10*time.Second, regexp.MustCompile(`no status from the effectors`))
		body.MustRun(t)
	})
}
