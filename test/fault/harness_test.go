// Package fault is the fault suite: it runs the demo
// (launch/demo.launch.xml) as separate processes of the built executables,
// one process per node so that each can be killed, frozen and restarted on
// its own, and attacks it as a crash, a hung process, a careless operator
// and a hostile peer would:
//
//   - absurd finite and non-finite velocity commands (clamped or rejected,
//     said once, counted);
//   - invalid run-time parameter changes (refused with the reason);
//   - waypoint persistence ($ROS_HOME/fsmnodes/diffbot/waypoints.yaml; a failed save
//     answers success=false);
//   - CLI waits bounded by --timeout;
//   - kill -9 and SIGSTOP of every node while the diffbot drives a patrol
//     (its own nodes in turn; the nodes that move no diffbot, the hexapod's
//     and Velma's, in a second lane beside them): every robot must end up
//     stopped or safe, no other process may go down, the measured time is
//     logged, and the node comes back (restart or SIGCONT) with nothing lost;
//   - hostile CDR (the fuzz corpora and generated garbage) fired at every
//     subscribed topic and service of the demo, after which every node must
//     still answer;
//   - inputs beyond their bounds (a parameter value, a routine, a map) and
//     fake data (garbage RTPS packets, a second operation mode publisher,
//     a fake map → odom): refused with the reason, counted, forgotten.
//
// Two demos run side by side on domains of their own (the whole demo, and
// the diffbot and the hexapod with foxglove_bridge and the flight
// recorder), each case on one of them (TestFaults says which), so that the
// diffbot's sequential fault cases are split in two and the commands and
// parameters need not wait for them.
//
// The processes run with the demo's settings, Cyclone's default 10 s
// participant lease included: supervision must not wait for the lease
// (the action servers watch their clients' heartbeats); see docs/rsm.md,
// "Supervision".
package fault

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/launch"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

func TestMain(m *testing.M) {
	// The suite runs some subtests side by side (t.Parallel); they wait on
	// the demo's processes, not on the CPU.
	testenv.DefaultParallel(4)
	os.Exit(testenv.Main(m))
}

// syncBuf is a bytes.Buffer safe for concurrent writes and reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is one node of the demo, started from its launch description.
type proc struct {
	desc *launch.Process
	fqn  string // node name, e.g. /diffbot/rsmNode
	argv []string
	env  []string
	out  *syncBuf // stdout and stderr of every run

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when the current run has exited
	killed bool          // the suite sent SIGKILL to the current run
}

// start runs the process (again).
func (p *proc) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.fqn, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done, p.killed = cmd, done, false
	p.mu.Unlock()
	fmt.Fprintf(p.out, "=== started pid %d\n", cmd.Process.Pid)
}

// signal sends sig to the running process. A SIGKILL is noted before it
// is sent, so that the run's end is never taken for a crash.
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	p.mu.Lock()
	cmd := p.cmd
	if sig == syscall.SIGKILL {
		p.killed = true
	}
	p.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%v to %s: %v", sig, p.fqn, err)
	}
	fmt.Fprintf(p.out, "=== %v\n", sig)
}

// exited reports whether the current run has ended.
func (p *proc) exited() bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// exitedUnbidden reports whether the current run has ended without the
// suite killing it: a crash, a panic or a clean exit nobody asked for.
func (p *proc) exitedUnbidden() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return !p.killed
	default:
		return false
	}
}

// stop ends the current run as the launcher would: SIGINT, then SIGKILL.
func (p *proc) stop() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// demo is the running demo.
type demo struct {
	root   string // module root
	bin    string // built executables
	domain uint32
	home   string // ROS_HOME of the processes, the demo's own
	procs  map[string]*proc
	order  []string
}

// startDemo loads launch/demo.launch.xml (foxglove_bridge on a free port)
// and starts each of its processes on its own in a fresh domain with a
// ROS_HOME of its own (the waypoints file), so that two demos can run side
// by side. With namespaces given, only the nodes under them, or of these
// names, are started (e.g. "/diffbot", "/foxglove_bridge").
func startDemo(t *testing.T, namespaces ...string) *demo {
	t.Helper()
	testenv.Heavy(t)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	d := &demo{root: root, domain: testenv.Domain(t), procs: map[string]*proc{}, home: filepath.Join(t.TempDir(), "ros_home")}
	if err := os.MkdirAll(d.home, 0o755); err != nil {
		t.Fatal(err)
	}
	d.bin = testenv.ExecutableDir(t, "nodes/...", "cmd/fsmnodes")
	desc, err := launch.Load(filepath.Join(root, "launch", "demo.launch.xml"), launch.Options{
		BinDir: d.bin, ShareDir: root, Args: launchArgs(append(testenv.DemoVelmaArgs(), "foxglove_port:=0")),
		LookupEnv: func(k string) (string, bool) { // $(env ROS_HOME) in the launch files
			if k == "ROS_HOME" {
				return d.home, true
			}
			return os.LookupEnv(k)
		}})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	base := append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", d.domain), "ROS_HOME="+d.home)
	for _, lp := range desc.Processes {
		argv, err := lp.Command(tmp)
		if err != nil {
			t.Fatal(err)
		}
		fqn := lp.FQN()
		if fqn == "" && lp.Namespace == "" && lp.Name != "" {
			fqn = "/" + lp.Name // in the root namespace
		}
		if fqn == "" {
			t.Fatalf("%s: node without a fully qualified name", lp.Label)
		}
		if len(namespaces) > 0 && !slices.ContainsFunc(namespaces, func(ns string) bool { return fqn == ns || strings.HasPrefix(fqn, ns+"/") }) {
			continue
		}
		p := &proc{desc: lp, fqn: fqn, argv: argv, env: lp.Environ(base), out: &syncBuf{}}
		d.procs[p.fqn] = p
		d.order = append(d.order, p.fqn)
	}
	for _, name := range d.order {
		d.procs[name].start(t)
	}
	t.Cleanup(func() {
		for _, name := range d.order {
			d.procs[name].stop()
		}
		if t.Failed() {
			for _, name := range d.order {
				out := d.procs[name].out.String()
				if len(out) > 6000 {
					out = "...\n" + out[len(out)-6000:]
				}
				t.Logf("--- output of %s:\n%s", name, out)
			}
		}
	})
	return d
}

// proc returns the process of a node.
func (d *demo) proc(t *testing.T, fqn string) *proc {
	t.Helper()
	p, ok := d.procs[fqn]
	if !ok {
		t.Fatalf("the demo has no node %s (nodes: %s)", fqn, strings.Join(d.order, ", "))
	}
	return p
}

// cli runs the fsmnodes CLI in the demo's domain and returns its stdout,
// stderr, exit code and run time.
func (d *demo) cli(t *testing.T, timeout time.Duration, args ...string) (string, string, int, time.Duration) {
	t.Helper()
	cmd := exec.Command(filepath.Join(d.bin, "fsmnodes"), args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", d.domain))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("fsmnodes %s: still running after %v (killed); stdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), timeout, out.String(), errb.String())
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode(), time.Since(start)
}

// launchArgs turns name:=value arguments into launch.Options.Args.
func launchArgs(args []string) [][2]string {
	var out [][2]string
	for _, a := range args {
		if k, v, ok := strings.Cut(a, ":="); ok {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}
