// Command velmademo runs the whole demo (demo.launch.xml, the real node
// executables) with the dashboard open in headless Chromium, and drives
// Velma through joint trajectories back to back for a while: the issue's
// "10 minutes of demo and no aborted motion". It prints how many motions
// were sent, how many succeeded, how many ended otherwise (with their
// error strings), how often ve_body left transp for safe, and the load
// average. Figures only: it never fails on them.
//
// The demo runs on a reserved DDS domain from bin/ (make build), with a
// free port for the dashboard. Without Chromium it says so and runs
// without the browser.
//
// Usage: go run ./test/bench/velmademo [-d 10m] [-args "velma_processes:=false"]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	trajectory_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/trajectory_msgs/msg"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench velmademo:", err)
		os.Exit(1)
	}
}

// body is the joint order of the body trajectories.
var body = []string{"torso_0_joint",
	"right_arm_0_joint", "right_arm_1_joint", "right_arm_2_joint", "right_arm_3_joint", "right_arm_4_joint", "right_arm_5_joint", "right_arm_6_joint",
	"left_arm_0_joint", "left_arm_1_joint", "left_arm_2_joint", "left_arm_3_joint", "left_arm_4_joint", "left_arm_5_joint", "left_arm_6_joint"}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("velmademo", flag.ContinueOnError)
	dur := fs.Duration("d", 10*time.Minute, "how long to drive Velma")
	extra := fs.String("args", "", "extra launch arguments for demo.launch.xml, space-separated")
	motion := fs.Duration("motion", 2*time.Second, "duration of each trajectory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		return fmt.Errorf("%w: run from the repository", err)
	}
	bin := filepath.Join(root, "bin")
	if _, err := os.Stat(filepath.Join(bin, "velma_core_cs")); err != nil {
		return fmt.Errorf("no node executables in %s: run make build first", bin)
	}
	domain, release, err := testenv.ReserveDomain()
	if err != nil {
		return err
	}
	defer release()
	tmp, err := os.MkdirTemp("", "fsmnodes-bench-velmademo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	port, err := freePort()
	if err != nil {
		return err
	}
	env := map[string]string{"ROS_DOMAIN_ID": fmt.Sprint(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
		"ROS_LOG_DIR": tmp, "ROS_HOME": tmp, "FSMNODES_BIN": bin, "FSMNODES_SHARE": root}
	for k, v := range env {
		os.Setenv(k, v)
	}
	launchArgs := append([]string{"launch", "fsmnodes", "demo.launch.xml", fmt.Sprintf("foxglove_port:=%d", port),
		"flight_recorder_dir:=" + filepath.Join(tmp, "flight")}, strings.Fields(*extra)...)
	fmt.Fprintf(out, "Velma in the demo: %v of joint trajectories of %v, dashboard open in Chromium (domain %d, load average %s)\n",
		*dur, *motion, domain, loadAvg())
	fmt.Fprintf(out, "demo: fsmnodes %s\n", strings.Join(launchArgs, " "))
	demo := exec.Command(filepath.Join(bin, "fsmnodes"), launchArgs...)
	demo.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logs := &logWatch{}
	pr, pw := io.Pipe()
	demo.Stdout, demo.Stderr = pw, pw
	go logs.read(pr, filepath.Join(tmp, "demo.log"))
	if err := demo.Start(); err != nil {
		return err
	}
	defer stop(demo)

	rc, err := ros.NewContext(ros.ContextOptions{NoSignals: true, LogOutput: io.Discard})
	if err != nil {
		return err
	}
	defer rc.Close()
	go func() { _ = rc.Spin(context.Background()) }()
	n, err := rc.NewNode("velma_demo_bench", "")
	if err != nil {
		return err
	}
	sig, stopSig := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSig()
	ctx, cancel := context.WithTimeout(sig, *dur+3*time.Minute)
	defer cancel()
	w, err := watch(n)
	if err != nil {
		return err
	}

	browser := startBrowser(ctx, tmp, port, out)
	defer browser()

	if err := ready(ctx, n, w); err != nil {
		return fmt.Errorf("velma did not get ready: %w (demo log %s)", err, filepath.Join(tmp, "demo.log"))
	}
	cli, err := ros.NewActionClient(n, "/velma/velma_core/spline_trajectory_action_joint", control_msgs_action.FollowJointTrajectory)
	if err != nil {
		return err
	}
	if err := cli.WaitForServer(ctx); err != nil {
		return err
	}
	home := w.position()
	safe0 := logs.safe.Load()
	start := time.Now()
	var sent, ok int
	failures := map[string]int{}
	for i := 0; time.Since(start) < *dur && ctx.Err() == nil; i++ {
		target := make([]float64, len(body))
		for j, name := range body {
			target[j] = home[name]
		}
		d := 0.3
		if i%2 == 1 {
			d = 0
		}
		target[2] += d // right_arm_1_joint
		target[9] -= d // left_arm_1_joint
		goal := &control_msgs_action.FollowJointTrajectory_Goal{}
		goal.Trajectory.JointNames = body
		goal.Trajectory.Points = []trajectory_msgs_msg.JointTrajectoryPoint{{Positions: target,
			TimeFromStart: builtin_interfaces_msg.Duration{Sec: int32(*motion / time.Second), Nanosec: uint32(*motion % time.Second)}}}
		sent++
		gctx, gcancel := context.WithTimeout(ctx, *motion+30*time.Second)
		res, st, err := cli.Execute(gctx, goal, nil)
		gcancel()
		switch {
		case err != nil:
			failures["error: "+err.Error()]++
		case st == action.StatusSucceeded:
			ok++
		default:
			why := fmt.Sprintf("status %v", st)
			if res != nil {
				why += fmt.Sprintf(", error_code %d %q", res.ErrorCode, res.ErrorString)
			}
			failures[why]++
			fmt.Fprintf(out, "  %6.1f s: motion %d ended %s (ve_body %s, cs %s)\n", time.Since(start).Seconds(), sent, why, w.body.Load(), w.cs.Load())
			// the next goal needs ve_body back in transp (after > 500 safe
			// iterations) and cs out of idle
			_ = waitFor(ctx, 30*time.Second, func() bool {
				b, _ := w.body.Load().(string)
				c, _ := w.cs.Load().(string)
				return b == "transp" && c != "idle" && c != ""
			})
		}
		if sent%50 == 0 {
			fmt.Fprintf(out, "  %6.1f s: %d motions, %d succeeded, ve_body left transp %d times\n", time.Since(start).Seconds(), sent, ok, logs.safe.Load()-safe0)
		}
	}
	el := time.Since(start)
	fmt.Fprintf(out, "\n%v driven: %d motions sent, %d succeeded, %d ended otherwise; ve_body left transp for safe %d times (all run: %d); load average %s\n",
		el.Round(time.Second), sent, ok, sent-ok, logs.safe.Load()-safe0, logs.safe.Load(), loadAvg())
	for why, k := range failures {
		fmt.Fprintf(out, "  %d × %s\n", k, why)
	}
	for _, l := range logs.lines() {
		fmt.Fprintf(out, "  log: %s\n", l)
	}
	return nil
}

// watched holds the latest Velma state the benchmark follows.
type watched struct {
	body, cs atomic.Value // string
	ready    atomic.Bool
	mu       sync.Mutex
	joints   map[string]float64
}

func (w *watched) position() map[string]float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.joints
}

func watch(n *ros.Node) (*watched, error) {
	w := &watched{}
	w.body.Store("")
	w.cs.Store("")
	if _, err := ros.NewSubscription(n, "/velma/velma_core/ve_body/state", ros.QoSLatched, func(m *std_msgs_msg.String) { w.body.Store(m.Data) }); err != nil {
		return nil, err
	}
	if _, err := ros.NewSubscription(n, "/velma/velma_core/cs/state", ros.QoSLatched, func(m *std_msgs_msg.String) { w.cs.Store(m.Data) }); err != nil {
		return nil, err
	}
	if _, err := ros.NewSubscription(n, "/velma/velma_core/status", ros.QoSDefault, func(m *velma_msgs_msg.Status) { w.ready.Store(m.MotorsReady) }); err != nil {
		return nil, err
	}
	_, err := ros.NewSubscription(n, "/velma/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) {
		if len(m.Name) == 0 || m.Name[0] != "torso_0_joint" {
			return
		}
		pos := make(map[string]float64, len(m.Name))
		for i, name := range m.Name {
			if i < len(m.Position) {
				pos[name] = m.Position[i]
			}
		}
		w.mu.Lock()
		w.joints = pos
		w.mu.Unlock()
	})
	return w, err
}

// ready waits for cs in safe, enables and homes the motors, and waits for
// them and for joint_states.
func ready(ctx context.Context, n *ros.Node, w *watched) error {
	if err := waitFor(ctx, 60*time.Second, func() bool { s, _ := w.cs.Load().(string); return s == "safe" }); err != nil {
		return fmt.Errorf("cs in safe: %w", err)
	}
	for _, s := range []string{"motors/enable", "motors/hp/home", "motors/ht/home"} {
		c, err := ros.NewClient(n, "/velma/velma_core/"+s, std_srvs_srv.Trigger)
		if err != nil {
			return err
		}
		if err := c.WaitForService(ctx); err != nil {
			return err
		}
		// homing is refused until the enable has reached the effectors
		// through cs and ve_body: repeat each call until it succeeds
		var r *std_srvs_srv.Trigger_Response
		err = waitFor(ctx, 30*time.Second, func() bool {
			r, err = c.Call(ctx, &std_srvs_srv.Trigger_Request{})
			return err == nil && r.Success
		})
		c.Close()
		if err != nil {
			return fmt.Errorf("%s: %v %+v", s, err, r)
		}
	}
	if err := waitFor(ctx, 60*time.Second, w.ready.Load); err != nil {
		return fmt.Errorf("motors ready: %w", err)
	}
	return waitFor(ctx, 10*time.Second, func() bool { return w.position() != nil })
}

func waitFor(ctx context.Context, d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// logWatch copies the demo's output to a file and counts ve_body's safe
// entries.
type logWatch struct {
	safe atomic.Int64
	mu   sync.Mutex
	keep []string
}

func (l *logWatch) read(r io.Reader, path string) {
	f, err := os.Create(path)
	if err != nil {
		f = nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f != nil {
			fmt.Fprintln(f, line)
		}
		if strings.Contains(line, "left transp for safe") {
			l.safe.Add(1)
			l.mu.Lock()
			if len(l.keep) < 20 {
				l.keep = append(l.keep, line)
			}
			l.mu.Unlock()
		}
	}
	if f != nil {
		f.Close()
	}
}

func (l *logWatch) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.keep...)
}

// startBrowser opens the dashboard in headless Chromium; it returns the
// function that closes it.
func startBrowser(ctx context.Context, tmp string, port int, out io.Writer) func() {
	chrome := ""
	for _, c := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(c); err == nil {
			chrome = p
			break
		}
	}
	if chrome == "" {
		fmt.Fprintln(out, "browser: no Chromium found; running without the dashboard open")
		return func() {}
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	// The bridge needs a moment to listen; Chromium shows an error page
	// and does not retry, so wait for the port.
	_ = waitFor(ctx, 60*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	cmd := exec.Command(chrome, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(tmp, "chromium"), "--remote-debugging-port=0", url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(out, "browser: %v; running without the dashboard open\n", err)
		return func() {}
	}
	fmt.Fprintf(out, "browser: %s %s\n", chrome, url)
	return func() { stop(cmd) }
}

// stop interrupts a process group and waits for it, killing it after 10 s.
func stop(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
